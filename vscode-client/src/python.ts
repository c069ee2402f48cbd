// Which Python runs `-m moor lsp`: the setting, else the Python extension's active
// interpreter (when that extension is installed and the workspace is trusted), else python3.

import * as os from "node:os";
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

export interface Interpreter {
  readonly command: string;
  /** Where the choice came from, for the output channel. */
  readonly source: "setting" | "python extension" | "default";
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

export async function findInterpreter(
  folder: vscode.WorkspaceFolder | undefined,
  trusted: boolean,
  log: vscode.LogOutputChannel,
): Promise<Interpreter> {
  // In an untrusted workspace VS Code ignores the workspace's own value of this setting
  // (it is listed in restrictedConfigurations), so only the person's value counts here.
  const configured = vscode.workspace
    .getConfiguration("moor", folder)
    .get<string>("python.interpreter", "");
  if (configured && configured.trim()) {
    return { command: expand(configured, folder), source: "setting" };
  }
  // The Python extension's choice is often the workspace's own virtual environment:
  // running it would run the workspace's code, so it is used in trusted workspaces only.
  if (trusted) {
    const api = await pythonApi(log);
    if (api?.getActiveEnvironmentPath) {
      try {
        const active = api.getActiveEnvironmentPath(folder?.uri);
        if (active) {
          let command = active.path;
          if (api.resolveEnvironment) {
            const resolved = await api.resolveEnvironment(active);
            const executable = resolved?.executable?.uri?.fsPath;
            if (executable) {
              command = executable;
            }
          }
          if (command) {
            return { command, source: "python extension" };
          }
        }
      } catch (error) {
        log.warn(`could not ask the Python extension for its interpreter: ${String(error)}`);
      }
    }
  }
  return { command: FALLBACK, source: "default" };
}
