// The moor VS Code client: starts `<python> -m moor lsp` — one server per workspace folder
// that holds moor.toml, moor.lock or memories/ — contributes a few commands, asks the
// person for a reason before a reaffirm, and shows a diff the server did not save.
// Everything else is the server's work.
//
// Several folders mean several servers naming the same commands, and VS Code refuses a
// second registration of a command id: each client declines the library's command feature
// (`FolderClient`), the extension registers every server command once, and a call is sent
// to the server of the folder it is about (`route`). Commands in code actions and code
// lenses are wrapped with their folder (`IN_FOLDER`), so they reach the server that made
// them whichever editor is active.

import { spawn } from "node:child_process";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  type CloseHandlerResult,
  type DynamicFeature,
  type ErrorHandler,
  type ErrorHandlerResult,
  type Executable,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  type StaticFeature,
} from "vscode-languageclient/node";

import { findInterpreter, onInterpreterChange } from "./python";

const CLIENT_ID = "moor"; // also makes the client follow the `moor.trace.server` setting
const SERVER_REAFFIRM = "moor.reaffirm";
const SERVER_CHECK = "moor.check";
const SERVER_SHOW_DIFF = "moor.showDiff";
/** `[folder uri, command, ...arguments]`: a server command bound to its folder's server. */
const IN_FOLDER = "moor.inFolder";
/** What makes a workspace folder moor's (as the activation events say). */
const MARKERS = ["moor.toml", "moor.lock", "memories"];
/** Server commands that write moor.lock or the journal: not in an untrusted workspace. */
const WRITING_COMMANDS = new Set(["moor.reaffirm", "moor.follow", "moor.bind"]);
export const SEVERITY_STATES = [
  "drifted",
  "gone",
  "invalid",
  "moved",
  "rewritten",
  "unverified",
  "unbound",
  "ungrounded",
] as const;
const SEVERITIES = new Set(["error", "warning", "information", "hint", "off"]);
const MAX_RESTARTS = 4;

let log: vscode.LogOutputChannel;
let extension: vscode.ExtensionContext;
/** The running clients, by the URI of the workspace folder each serves. */
const clients = new Map<string, LanguageClient>();
/** Server commands registered with VS Code (once, for every folder's server). */
const registered = new Set<string>();
let starting: Promise<void> | undefined;
let writeCommands: vscode.Disposable | undefined;

function firstFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

/** The client declines the library's command feature: the extension registers the server's
 * commands itself, once for all folders (see the top of this file). */
class FolderClient extends LanguageClient {
  public override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    const method = (feature as Partial<DynamicFeature<unknown>>).registrationType?.method;
    if (method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

function inside(child: vscode.Uri, parent: vscode.Uri): boolean {
  const base = parent.toString().replace(/\/$/, "");
  return child.toString().startsWith(`${base}/`);
}

/** The folders to serve: those holding a marker, but not one inside another (the outer
 * folder's server already sees it); none marked: the first folder, as before. */
async function moorFolders(): Promise<vscode.WorkspaceFolder[]> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const marked: vscode.WorkspaceFolder[] = [];
  for (const folder of folders) {
    const found = await Promise.all(MARKERS.map((name) => exists(vscode.Uri.joinPath(folder.uri, name))));
    if (found.some(Boolean)) {
      marked.push(folder);
    }
  }
  const outer = marked.filter((folder) => !marked.some((other) => other !== folder && inside(folder.uri, other.uri)));
  return outer.length > 0 ? outer : folders.slice(0, 1);
}

/** The running client for a URI, an absolute path or (neither) the active editor's file;
 * with one client, that one. */
function clientFor(target: unknown): LanguageClient | undefined {
  let uri: vscode.Uri | undefined;
  if (target instanceof vscode.Uri) {
    uri = target;
  } else if (typeof target === "string" && target.startsWith("file:")) {
    uri = vscode.Uri.parse(target);
  } else if (typeof target === "string" && path.isAbsolute(target)) {
    uri = vscode.Uri.file(target);
  }
  uri ??= vscode.window.activeTextEditor?.document.uri;
  const folder = uri ? vscode.workspace.getWorkspaceFolder(uri) : undefined;
  const found = folder ? clients.get(folder.uri.toString()) : undefined;
  if (found) {
    return found;
  }
  for (const [key, running] of clients) {
    if (uri && inside(uri, vscode.Uri.parse(key))) {
      return running;
    }
  }
  return clients.size === 1 ? [...clients.values()][0] : undefined;
}

function folderName(running: LanguageClient): string | undefined {
  return running.clientOptions.workspaceFolder?.name;
}

/** `moor.severity.<state>` values other than `default`, for initializationOptions. */
export function severityOverrides(
  config: Pick<vscode.WorkspaceConfiguration, "get">,
): Record<string, string> {
  const overrides: Record<string, string> = {};
  for (const state of SEVERITY_STATES) {
    const value = config.get<string>(`severity.${state}`, "default");
    if (value && SEVERITIES.has(value)) {
      overrides[state] = value;
    }
  }
  return overrides;
}

async function serverCommand(folder: vscode.WorkspaceFolder | undefined, trusted: boolean): Promise<Executable> {
  const config = vscode.workspace.getConfiguration("moor", folder);
  const python = await findInterpreter(folder, trusted, log);
  const extra = config.get<string[]>("server.args", []).filter((a) => typeof a === "string");
  // -P (Python >= 3.11, as moor needs): do not put the working folder on sys.path, so a
  // `moor` folder inside an untrusted workspace is never imported in place of the real one.
  const args = [...(trusted ? [] : ["-P"]), "-m", "moor", "lsp", ...extra];
  const where = folder ? ` for ${folder.name}` : "";
  log.info(`starting the server${where}: ${python.command} ${args.join(" ")} (interpreter from ${python.source})`);
  return {
    command: python.command,
    args,
    options: { cwd: folder?.uri.fsPath, env: { ...process.env, PYTHONUNBUFFERED: "1" } },
  };
}

function errorHandler(owner: () => LanguageClient | undefined): ErrorHandler {
  // The client's own handler decides (restart up to MAX_RESTARTS times in 3 minutes);
  // this wrapper only says so in the output channel.
  let fallback: ErrorHandler | undefined;
  const inner = (): ErrorHandler => {
    if (!fallback) {
      const client = owner();
      if (!client) {
        throw new Error("no language client");
      }
      fallback = client.createDefaultErrorHandler(MAX_RESTARTS);
    }
    return fallback;
  };
  return {
    async error(error, message, count): Promise<ErrorHandlerResult> {
      log.error(`connection to the moor server: ${error.message}`);
      return inner().error(error, message, count);
    },
    async closed(): Promise<CloseHandlerResult> {
      const result = await inner().closed();
      if (result.action === CloseAction.Restart) {
        log.warn("the moor server stopped unexpectedly: restarting it");
      } else {
        log.error(result.message ?? "the moor server stopped unexpectedly and will not be restarted");
      }
      return result;
    },
  };
}

async function askReason(memory: unknown): Promise<string | undefined> {
  const name = typeof memory === "string" ? path.basename(memory) : "the memory";
  const reason = await vscode.window.showInputBox({
    title: `moor: reaffirm ${name}`,
    prompt: "Why does the memory still hold for the code as it is now?",
    placeHolder: "e.g. the rename did not change the behaviour described",
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() ? undefined : "A reason is needed (it goes in the journal)."),
  });
  return reason?.trim() || undefined;
}

function report(command: string, result: unknown): void {
  const done = (result as { done?: unknown } | undefined)?.done;
  if (Array.isArray(done) && done.length > 0) {
    vscode.window.showInformationMessage(`moor ${command.replace(/^moor\./, "")}: ${done.join("; ")}`);
  }
}

/** `moor.showDiff` answers `{diff, uri}`; the server has already shown the file at `uri`.
 * Without one (an untrusted workspace: it writes nothing), the text opens untitled. */
async function showUnsavedDiff(result: unknown): Promise<void> {
  const answer = result as { diff?: unknown; uri?: unknown } | undefined;
  if (answer?.uri !== null || typeof answer.diff !== "string") {
    return;
  }
  const doc = await vscode.workspace.openTextDocument({ content: answer.diff, language: "diff" });
  await vscode.window.showTextDocument(doc, { preview: true });
}

/** A server command bound to the folder whose server made it (code actions, code lenses). */
function inFolder(command: vscode.Command, folder: vscode.WorkspaceFolder): vscode.Command {
  return { ...command, command: IN_FOLDER, arguments: [folder.uri.toString(), command.command, ...(command.arguments ?? [])] };
}

function createClient(folder: vscode.WorkspaceFolder | undefined, trusted: boolean, serverOptions: ServerOptions): LanguageClient {
  const config = vscode.workspace.getConfiguration("moor", folder);
  // In a folder's client, only that folder's files: another folder has its own server.
  const pattern = folder ? { pattern: `${folder.uri.fsPath}/**/*` } : {};
  let created: LanguageClient | undefined;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "markdown", ...pattern },
      { scheme: "file", ...pattern }, // code lenses and hovers on the code that memories are about
    ],
    workspaceFolder: folder,
    outputChannel: log,
    traceOutputChannel: log,
    // Read by the server at initialize; they win over its workspace/configuration.
    initializationOptions: { trusted, severity: severityOverrides(config) },
    errorHandler: errorHandler(() => created),
    middleware: {
      async provideCodeActions(document, range, context, token, next) {
        const actions = await next(document, range, context, token);
        if (!actions) {
          return actions;
        }
        const kept = vscode.workspace.isTrusted
          ? actions
          : actions.filter((action) => {
              const command = action instanceof vscode.CodeAction ? action.command?.command : action.command;
              return !(command && WRITING_COMMANDS.has(command));
            });
        if (!folder) {
          return kept;
        }
        return kept.map((action) => {
          if (action instanceof vscode.CodeAction) {
            if (action.command) {
              action.command = inFolder(action.command, folder);
            }
            return action;
          }
          return inFolder(action, folder);
        });
      },
      async provideCodeLenses(document, token, next) {
        const lenses = await next(document, token);
        if (folder && lenses) {
          for (const lens of lenses) {
            if (lens.command) {
              lens.command = inFolder(lens.command, folder);
            }
          }
        }
        return lenses;
      },
    },
  };
  const name = folder && (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? `moor (${folder.name})` : "moor";
  created = new FolderClient(CLIENT_ID, name, serverOptions, clientOptions);
  created.onDidChangeState((event) => {
    const state = (value: State): string => (State[value] ?? String(value)).toLowerCase();
    log.info(`server${folder ? ` for ${folder.name}` : ""} ${state(event.oldState)} -> ${state(event.newState)}`);
  });
  return created;
}

/** Register, once, each command a server says it executes (every server names the same). */
function registerServerCommands(running: LanguageClient): void {
  const named = running.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  for (const command of named) {
    if (!registered.has(command)) {
      registered.add(command);
      extension.subscriptions.push(vscode.commands.registerCommand(command, (...args: unknown[]) => route(command, args)));
    }
  }
}

/** `moor.inFolder`: `[folder uri, command, ...arguments]`, to that folder's server. */
async function routeInFolder(folderUri: unknown, command: unknown, ...args: unknown[]): Promise<unknown> {
  if (typeof command !== "string") {
    return undefined;
  }
  const running = typeof folderUri === "string" ? clients.get(folderUri) : undefined;
  return route(command, args, running);
}

/** Run a server command on the server it is about (`clientFor` its first argument), with
 * what the client adds: refusing writes when untrusted, asking for a reaffirm's reason,
 * saying what was done, and showing a diff the server did not save. */
async function route(command: string, args: unknown[], target?: LanguageClient): Promise<unknown> {
  const running = target ?? clientFor(args[0]);
  if (!running || !running.isRunning()) {
    vscode.window.showWarningMessage(`moor: no running server for ${command} here.`);
    return undefined;
  }
  if (WRITING_COMMANDS.has(command) && !vscode.workspace.isTrusted) {
    vscode.window.showWarningMessage(`moor: ${command} changes moor.lock; trust the workspace first.`);
    return undefined;
  }
  if (command === SERVER_REAFFIRM && (typeof args[1] !== "string" || !args[1].trim())) {
    const reason = await askReason(args[0]);
    if (!reason) {
      return undefined;
    }
    args = [args[0], reason];
  }
  let result: unknown;
  try {
    result = await running.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error(`${command}: ${message}`);
    vscode.window.showErrorMessage(`moor: ${command} failed: ${message}`);
    return undefined;
  }
  if (WRITING_COMMANDS.has(command)) {
    report(command, result);
  }
  if (command === SERVER_SHOW_DIFF) {
    await showUnsavedDiff(result);
  }
  return result;
}

async function startClient(folder: vscode.WorkspaceFolder | undefined): Promise<void> {
  const trusted = vscode.workspace.isTrusted;
  const executable = await serverCommand(folder, trusted);
  const created = createClient(folder, trusted, { run: executable, debug: executable });
  const key = folder?.uri.toString() ?? "";
  clients.set(key, created);
  try {
    await created.start();
    registerServerCommands(created);
  } catch (error) {
    log.error(`the moor server${folder ? ` for ${folder.name}` : ""} did not start: ${String(error)}`);
    const choice = await vscode.window.showErrorMessage(
      `moor: the language server did not start with "${executable.command}". Is moor installed for that Python? Set "moor.python.interpreter" to one that has it.`,
      "Show output",
      "Open settings",
    );
    if (choice === "Show output") {
      log.show(true);
    } else if (choice === "Open settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "moor.python.interpreter");
    }
  }
}

async function startClients(): Promise<void> {
  const folders = await moorFolders();
  if (folders.length === 0) {
    await startClient(undefined); // no folder open: the server says there is nothing to check
    return;
  }
  await Promise.all(folders.map((folder) => startClient(folder)));
}

async function stopClients(): Promise<void> {
  const old = [...clients.values()];
  clients.clear();
  await Promise.all(
    old.map(async (running) => {
      try {
        await running.dispose(2000);
      } catch (error) {
        log.warn(`stopping the server: ${String(error)}`);
      }
    }),
  );
}

function restart(reason: string): Promise<void> {
  const previous = starting ?? Promise.resolve();
  starting = previous.then(async () => {
    log.info(`restarting the server: ${reason}`);
    await stopClients();
    await startClients();
  });
  return starting;
}

async function pickMemory(): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document.uri.scheme === "file" && editor.document.languageId === "markdown") {
    return editor.document.uri.fsPath;
  }
  const files = await vscode.workspace.findFiles("**/memories/**/*.md", "**/node_modules/**", 500);
  const items = files
    .map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri }))
    .sort((a, b) => a.label.localeCompare(b.label));
  const picked = await vscode.window.showQuickPick(items, { title: "moor: reaffirm which memory?" });
  return picked?.uri.fsPath;
}

async function reaffirmPrompt(memory?: unknown): Promise<unknown> {
  if (![...clients.values()].some((running) => running.isRunning())) {
    vscode.window.showWarningMessage("moor: the language server is not running.");
    return undefined;
  }
  let target: string | undefined;
  if (memory instanceof vscode.Uri) {
    target = memory.fsPath;
  } else if (typeof memory === "string" && memory) {
    target = memory;
  } else {
    target = await pickMemory();
  }
  if (!target) {
    return undefined;
  }
  const reason = await askReason(target);
  if (!reason) {
    return undefined;
  }
  // An absolute path: `route` sends it to the server of the folder it is in, and says
  // what was done.
  return route(SERVER_REAFFIRM, [target, reason]);
}

function registerWriteCommands(context: vscode.ExtensionContext): void {
  if (writeCommands) {
    return;
  }
  writeCommands = vscode.commands.registerCommand("moor.reaffirm.prompt", reaffirmPrompt);
  context.subscriptions.push(writeCommands);
}

/** "moor: 4 memories checked: 3 current, 1 drifted" from the answer of `moor.check`. */
export function checkSummary(result: unknown): { message: string; attention: number } | undefined {
  const answer = result as { memories?: unknown; summary?: unknown; attention?: unknown } | undefined;
  if (typeof answer?.memories !== "number") {
    return undefined;
  }
  const counts = Object.entries(
    answer.summary && typeof answer.summary === "object" ? (answer.summary as Record<string, unknown>) : {},
  )
    .filter((entry): entry is [string, number] => typeof entry[1] === "number" && entry[1] > 0)
    .map(([state, count]) => `${count} ${state}`);
  const noun = answer.memories === 1 ? "memory" : "memories";
  const message = `moor: ${answer.memories} ${noun} checked${counts.length ? `: ${counts.join(", ")}` : ""}`;
  return { message, attention: typeof answer.attention === "number" ? answer.attention : 0 };
}

/** Check workspace through a running server: a full re-check, its diagnostics updated. */
async function checkThroughServer(running: LanguageClient): Promise<number> {
  const name = clients.size > 1 ? folderName(running) : undefined;
  let result: unknown;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `moor: checking memories${name ? ` in ${name}` : ""}` },
      () => running.sendRequest(ExecuteCommandRequest.type, { command: SERVER_CHECK, arguments: [] }),
    );
  } catch (error) {
    log.error(`${SERVER_CHECK}: ${String(error)}`);
    vscode.window.showErrorMessage(`moor: the check failed: ${String(error)}`);
    return 0;
  }
  const summary = checkSummary(result);
  if (!summary) {
    log.warn(`${SERVER_CHECK} answered ${JSON.stringify(result)}`);
    vscode.window.showWarningMessage("moor: the server's check answered nothing readable; see the moor output.");
    return 0;
  }
  vscode.window.showInformationMessage(name ? summary.message.replace(/^moor:/, `moor (${name}):`) : summary.message);
  return summary.attention;
}

async function checkWorkspace(): Promise<void> {
  const running = [...clients.values()].filter((each) => each.isRunning());
  if (running.length > 0) {
    const attention = await Promise.all(running.map((each) => checkThroughServer(each)));
    if (attention.some((count) => count > 0)) {
      await vscode.commands.executeCommand("workbench.actions.view.problems");
    }
    return;
  }
  // No server (it did not start): the CLI, its report in the output channel.
  const folder = firstFolder();
  if (!folder) {
    vscode.window.showWarningMessage("moor: open a folder to check.");
    return;
  }
  const trusted = vscode.workspace.isTrusted;
  const python = await findInterpreter(folder, trusted, log);
  const args = [...(trusted ? [] : ["-P"]), "-m", "moor", "check"];
  log.info(`${python.command} ${args.join(" ")} (in ${folder.uri.fsPath})`);
  log.show(true);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(python.command, args, { cwd: folder.uri.fsPath, env: process.env });
    const forward = (data: Buffer): void => {
      for (const line of data.toString("utf8").split(/\r?\n/)) {
        if (line) {
          log.appendLine(line);
        }
      }
    };
    child.stdout.on("data", forward);
    child.stderr.on("data", forward);
    child.on("error", (error) => {
      log.error(`moor check could not run: ${error.message}`);
      resolve(null);
    });
    child.on("close", (status) => resolve(status));
  });
  if (code === 0) {
    vscode.window.showInformationMessage("moor check: every memory is current.");
  } else if (code !== null) {
    vscode.window.showWarningMessage(`moor check exited with status ${code}: see the moor output.`);
  } else {
    vscode.window.showErrorMessage("moor check could not run: see the moor output.");
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extension = context;
  log = vscode.window.createOutputChannel("moor", { log: true });
  context.subscriptions.push(log);
  context.subscriptions.push(
    vscode.commands.registerCommand("moor.checkWorkspace", checkWorkspace),
    vscode.commands.registerCommand("moor.restartServer", () => restart("asked for")),
    vscode.commands.registerCommand("moor.showOutput", () => log.show()),
    vscode.commands.registerCommand(IN_FOLDER, routeInFolder),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (
        event.affectsConfiguration("moor.python.interpreter") ||
        event.affectsConfiguration("moor.server.args") ||
        event.affectsConfiguration("moor.severity")
      ) {
        void restart("settings changed");
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void restart("the workspace folders changed")),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      registerWriteCommands(context);
      void restart("the workspace is trusted now");
    }),
    { dispose: () => void stopClients() },
  );
  if (vscode.workspace.isTrusted) {
    registerWriteCommands(context);
  } else {
    log.info("untrusted workspace: the server runs read-only (no reaffirm, follow or bind)");
  }
  const following = await onInterpreterChange(log, () => {
    const configured = vscode.workspace.getConfiguration("moor", firstFolder()).get<string>("python.interpreter", "");
    if (!configured.trim() && vscode.workspace.isTrusted) {
      void restart("the Python interpreter changed");
    }
  });
  if (following) {
    context.subscriptions.push(following);
  }
  starting = startClients();
  await starting;
}

export async function deactivate(): Promise<void> {
  await stopClients();
}
