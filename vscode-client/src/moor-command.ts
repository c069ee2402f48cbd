// Which moor the extension runs, in order: the `moor.path` setting (the `moor` command);
// the `moor.python.interpreter` setting (`<python> -m moor`); the Python extension's active
// interpreter when it has moor (trusted workspaces only); the `moor` command on PATH, where
// `pipx install moor-memory` and `uv tool install moor-memory` put it; else `python3 -m moor`.

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";

/** The small part of the ms-python.python API that moor uses; every member may be absent. */
interface EnvironmentPath {
  readonly id: string;
  readonly path: string;
}
interface ResolvedEnvironment {
  readonly executable?: { readonly uri?: vscode.Uri };
}
interface PythonEnvironmentsApi {
  getActiveEnvironmentPath?(resource?: vscode.Uri): EnvironmentPath | undefined;
  resolveEnvironment?(environment: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}
interface PythonExtensionApi {
  readonly environments?: PythonEnvironmentsApi;
}

export const PYTHON_EXTENSION = "ms-python.python";
export const FALLBACK = "python3";

export const INSTALL_HINT = "pipx install moor-memory";
const PROBE_TIMEOUT_MS = 10_000;

/** How to run moor: `command` and then `prefix` before moor's own arguments (`lsp`, `check`). */
export interface MoorCommand {
  readonly command: string;
  /** `[]` for the `moor` command itself; `-m moor` (after `-P` when untrusted) for a Python. */
  readonly prefix: readonly string[];
  /** Where the choice came from, for the output channel. */
  readonly source: "moor.path" | "moor.python.interpreter" | "python extension" | "PATH" | "default";
}

export function expand(value: string, folder: vscode.WorkspaceFolder | undefined): string {
  let result = value.trim();
  if (folder) {
    result = result.split("${workspaceFolder}").join(folder.uri.fsPath);
  }
  if (result === "~" || result.startsWith("~/")) {
    result = os.homedir() + result.slice(1);
  }
  return result;
}

async function pythonApi(log: vscode.LogOutputChannel): Promise<PythonEnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments;
  } catch (error) {
    log.warn(`the Python extension did not activate: ${String(error)}`);
    return undefined;
  }
}

/** Subscribe to interpreter changes in the Python extension, if it offers them. */
export async function onInterpreterChange(
  log: vscode.LogOutputChannel,
  listener: () => void,
): Promise<vscode.Disposable | undefined> {
  const api = await pythonApi(log);
  try {
    return api?.onDidChangeActiveEnvironmentPath?.(listener);
  } catch (error) {
    log.warn(`cannot follow the Python extension's interpreter: ${String(error)}`);
    return undefined;
  }
}

function viaPython(python: string, trusted: boolean, source: MoorCommand["source"]): MoorCommand {
  // -P (Python >= 3.11, as moor needs): do not put the working folder on sys.path, so a
  // `moor` folder inside an untrusted workspace is never imported in place of the real one.
  return { command: python, prefix: [...(trusted ? [] : ["-P"]), "-m", "moor"], source };
}

function inside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** The `moor` command on PATH (absolute entries only; in an untrusted workspace none inside a
 * workspace folder, which could hold a `moor` of the workspace's own). */
export function onPath(pathVariable: string | undefined, trusted: boolean): string | undefined {
  const names = process.platform === "win32" ? ["moor.exe", "moor.cmd"] : ["moor"];
  const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
  for (const entry of (pathVariable ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(entry) || (!trusted && folders.some((folder) => inside(entry, folder)))) {
      continue;
    }
    for (const name of names) {
      const candidate = path.join(entry, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) {
          return candidate;
        }
      } catch {
        // not here: the next entry
      }
    }
  }
  return undefined;
}

/** Whether `python` can import moor (run only in trusted workspaces: it imports from there). */
function hasMoor(python: string, cwd: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(python, ["-c", "import moor.launch"], { cwd, stdio: "ignore" });
    const timer = setTimeout(() => child.kill(), PROBE_TIMEOUT_MS);
    child.on("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve(status === 0);
    });
  });
}

async function pythonExtensionInterpreter(
  folder: vscode.WorkspaceFolder | undefined,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const api = await pythonApi(log);
  if (!api?.getActiveEnvironmentPath) {
    return undefined;
  }
  try {
    const active = api.getActiveEnvironmentPath(folder?.uri);
    if (!active) {
      return undefined;
    }
    let command = active.path;
    if (api.resolveEnvironment) {
      const resolved = await api.resolveEnvironment(active);
      command = resolved?.executable?.uri?.fsPath || command;
    }
    return command || undefined;
  } catch (error) {
    log.warn(`could not ask the Python extension for its interpreter: ${String(error)}`);
    return undefined;
  }
}

export async function findMoor(
  folder: vscode.WorkspaceFolder | undefined,
  trusted: boolean,
  log: vscode.LogOutputChannel,
): Promise<MoorCommand> {
  // In an untrusted workspace VS Code ignores the workspace's own values of these settings
  // (they are listed in restrictedConfigurations), so only the person's values count here.
  const config = vscode.workspace.getConfiguration("moor", folder);
  const moorPath = config.get<string>("path", "");
  if (moorPath && moorPath.trim()) {
    return { command: expand(moorPath, folder), prefix: [], source: "moor.path" };
  }
  const configured = config.get<string>("python.interpreter", "");
  if (configured && configured.trim()) {
    return viaPython(expand(configured, folder), trusted, "moor.python.interpreter");
  }
  // The Python extension's choice is often the workspace's own virtual environment:
  // running it would run the workspace's code, so it is used in trusted workspaces only,
  // and only when moor is installed there (a project that pins its own moor).
  if (trusted) {
    const python = await pythonExtensionInterpreter(folder, log);
    if (python) {
      if (await hasMoor(python, folder?.uri.fsPath)) {
        return viaPython(python, trusted, "python extension");
      }
      log.info(`the Python extension's interpreter ${python} has no moor: looking on PATH`);
    }
  }
  const found = onPath(process.env.PATH, trusted);
  if (found) {
    return { command: found, prefix: [], source: "PATH" };
  }
  return viaPython(FALLBACK, trusted, "default");
}
