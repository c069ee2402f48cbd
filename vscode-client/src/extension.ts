// The moor VS Code client: starts `moor lsp` (which moor: moor-command.ts) — one server for
// every workspace folder (the server keeps a state per root and routes each file to the innermost root
// holding it; the library tells it of folders added and removed) — contributes a few
// commands, asks the person for a reason before a reaffirm, and shows a diff the server did
// not save. Everything else is the server's work.

import { spawn } from "node:child_process";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  type CloseHandlerResult,
  type ErrorHandler,
  type ErrorHandlerResult,
  type Executable,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import { showAtlas } from "./atlas-view";
import { findMoor, INSTALL_HINT, type MoorCommand, onInterpreterChange } from "./moor-command";

const CLIENT_ID = "moor"; // also makes the client follow the `moor.trace.server` setting
const SERVER_REAFFIRM = "moor.reaffirm";
const SERVER_CHECK = "moor.check";
const SERVER_SHOW_DIFF = "moor.showDiff";
/** Server commands that write moor.lock or the journal: not in an untrusted workspace. */
const WRITING_COMMANDS = new Set([
  "moor.reaffirm",
  "moor.follow",
  "moor.bind",
  "moor.forget",
  "moor.supersede",
  "moor.restore",
  "moor.reobserve",
]);
/** Commands whose last argument is a reason the person gives: the question, and how many
 * arguments come before the reason. */
const REASONS: Record<string, { question: string; example: string; before: number }> = {
  "moor.reaffirm": {
    question: "Why does the memory still hold for the code as it is now?",
    example: "e.g. the rename did not change the behaviour described",
    before: 1,
  },
  "moor.forget": {
    question: "Why forget it (it never held)? Its text will be refused from now on.",
    example: "e.g. written from a misreading: the cache is never shared",
    before: 1,
  },
  "moor.supersede": {
    question: "Why does the replacing memory say it better?",
    example: "e.g. the new memory also covers the retry budget",
    before: 2,
  },
  "moor.restore": {
    question: "Why does the retired memory hold after all?",
    example: "e.g. the replacement was reverted; this is true again",
    before: 1,
  },
};
const MAX_RESTARTS = 4;

let log: vscode.LogOutputChannel;
let client: LanguageClient | undefined;
let starting: Promise<void> | undefined;
let writeCommands: vscode.Disposable | undefined;

function firstFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

async function serverCommand(folder: vscode.WorkspaceFolder | undefined, trusted: boolean): Promise<Executable> {
  const config = vscode.workspace.getConfiguration("moor", folder);
  const moor = await findMoor(folder, trusted, log);
  const extra = config.get<string[]>("server.args", []).filter((a) => typeof a === "string");
  const args = [...moor.prefix, "lsp", ...extra];
  log.info(`starting the server: ${moor.command} ${args.join(" ")} (moor from ${moor.source})`);
  return {
    command: moor.command,
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

async function askReason(command: string, memory: unknown): Promise<string | undefined> {
  const name = typeof memory === "string" ? path.basename(memory) : "the memory";
  const reason = await vscode.window.showInputBox({
    title: `moor: ${command.replace(/^moor\./, "")} ${name}`,
    prompt: REASONS[command]?.question ?? "Why?",
    placeHolder: REASONS[command]?.example ?? "",
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

/** What the client adds to a server command: refusing writes when untrusted, asking for a
 * reaffirm's reason, saying what was done, and showing a diff the server did not save. */
async function executeCommand(
  command: string,
  args: unknown[],
  next: (command: string, args: unknown[]) => unknown,
): Promise<unknown> {
  if (WRITING_COMMANDS.has(command) && !vscode.workspace.isTrusted) {
    vscode.window.showWarningMessage(`moor: ${command} changes moor.lock; trust the workspace first.`);
    return undefined;
  }
  const asked = REASONS[command];
  const given = asked === undefined ? undefined : args[asked.before];
  if (asked !== undefined && (typeof given !== "string" || !given.trim())) {
    const reason = await askReason(command, args[0]);
    if (!reason) {
      return undefined;
    }
    args = [...args.slice(0, asked.before), reason];
  }
  let result: unknown;
  try {
    result = await next(command, args);
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

function createClient(trusted: boolean, serverOptions: ServerOptions): LanguageClient {
  let created: LanguageClient | undefined;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "markdown" },
      { scheme: "file" }, // code lenses and hovers on the code that memories are about
    ],
    outputChannel: log,
    traceOutputChannel: log,
    // Read by the server at initialize. The severities come from workspace/configuration,
    // which VS Code answers per folder (the server asks for each root).
    initializationOptions: { trusted, asksReasons: true },
    errorHandler: errorHandler(() => created),
    middleware: {
      async provideCodeActions(document, range, context, token, next) {
        const actions = await next(document, range, context, token);
        if (!actions || vscode.workspace.isTrusted) {
          return actions;
        }
        return actions.filter((action) => {
          const command = action instanceof vscode.CodeAction ? action.command?.command : action.command;
          return !(command && WRITING_COMMANDS.has(command));
        });
      },
      executeCommand: (command, args, next) => executeCommand(command, args, next),
    },
  };
  created = new LanguageClient(CLIENT_ID, "moor", serverOptions, clientOptions);
  created.onDidChangeState((event) => {
    const state = (value: State): string => (State[value] ?? String(value)).toLowerCase();
    log.info(`server ${state(event.oldState)} -> ${state(event.newState)}`);
  });
  return created;
}

async function startClient(): Promise<void> {
  const folder = firstFolder(); // where the interpreter setting is read and the server runs
  const trusted = vscode.workspace.isTrusted;
  const executable = await serverCommand(folder, trusted);
  const created = createClient(trusted, { run: executable, debug: executable });
  client = created;
  try {
    await created.start();
  } catch (error) {
    log.error(`the moor server did not start: ${String(error)}`);
    const choice = await vscode.window.showErrorMessage(
      `moor: the language server did not start with "${executable.command}". Install moor (${INSTALL_HINT}), or set "moor.path" to the moor command (or "moor.python.interpreter" to a Python that has moor).`,
      "Show output",
      "Open settings",
    );
    if (choice === "Show output") {
      log.show(true);
    } else if (choice === "Open settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", "moor.path");
    }
  }
}

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  try {
    await old?.dispose(2000);
  } catch (error) {
    log.warn(`stopping the server: ${String(error)}`);
  }
}

function restart(reason: string): Promise<void> {
  const previous = starting ?? Promise.resolve();
  starting = previous.then(async () => {
    log.info(`restarting the server: ${reason}`);
    await stopClient();
    await startClient();
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
  const running = client;
  if (!running?.isRunning()) {
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
  const reason = await askReason(SERVER_REAFFIRM, target);
  if (!reason) {
    return undefined;
  }
  // An absolute path: the server finds the root it is in.
  return executeCommand(SERVER_REAFFIRM, [target, reason], (command, args) =>
    running.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }),
  );
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
  let result: unknown;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: "moor: checking memories" },
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
  vscode.window.showInformationMessage(summary.message);
  return summary.attention;
}

async function checkWorkspace(): Promise<void> {
  if (client?.isRunning()) {
    if ((await checkThroughServer(client)) > 0) {
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
  const moor: MoorCommand = await findMoor(folder, trusted, log);
  const args = [...moor.prefix, "check"];
  log.info(`${moor.command} ${args.join(" ")} (in ${folder.uri.fsPath}; moor from ${moor.source})`);
  log.show(true);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(moor.command, args, { cwd: folder.uri.fsPath, env: process.env });
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
  log = vscode.window.createOutputChannel("moor", { log: true });
  context.subscriptions.push(log);
  context.subscriptions.push(
    vscode.commands.registerCommand("moor.checkWorkspace", checkWorkspace),
    vscode.commands.registerCommand("moor.restartServer", () => restart("asked for")),
    vscode.commands.registerCommand("moor.showOutput", () => log.show()),
    vscode.commands.registerCommand("moor.showAtlas", () => showAtlas(context, () => client, log)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (
        event.affectsConfiguration("moor.path") ||
        event.affectsConfiguration("moor.python.interpreter") ||
        event.affectsConfiguration("moor.server.args")
      ) {
        void restart("settings changed");
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      registerWriteCommands(context);
      void restart("the workspace is trusted now");
    }),
    { dispose: () => void stopClient() },
  );
  if (vscode.workspace.isTrusted) {
    registerWriteCommands(context);
  } else {
    log.info("untrusted workspace: the server runs read-only (no reaffirm, follow or bind)");
  }
  const following = await onInterpreterChange(log, () => {
    const config = vscode.workspace.getConfiguration("moor", firstFolder());
    const configured = config.get<string>("path", "") + config.get<string>("python.interpreter", "");
    if (!configured.trim() && vscode.workspace.isTrusted) {
      void restart("the Python interpreter changed");
    }
  });
  if (following) {
    context.subscriptions.push(following);
  }
  starting = startClient();
  await starting;
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
