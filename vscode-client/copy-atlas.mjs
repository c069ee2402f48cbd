// Copies the CLI's atlas page files into media/ for the *Show atlas* view (atlas-view.ts):
// the page is written once, in cli/moor/, and shown by both.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, "..", "cli", "moor");
mkdirSync(join(here, "media"), { recursive: true });
for (const name of ["atlas.js", "atlas.css", "atlas_body.html"]) {
  copyFileSync(join(source, name), join(here, "media", name));
}
