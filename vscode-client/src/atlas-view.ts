// *moor: Show atlas*: the page `moor atlas` writes, in a webview, fed by the language
// server's `moor.atlas` command (the atlas of its live check) and sent again whenever
// moor's diagnostics change, so it follows the trust states as the server sees them. The
// page's script, style and body are the CLI's own files (cli/moor/atlas.*), copied into
// media/ at build time (copy-atlas.mjs): one page, two hosts. One atlas per root: the
// view shows the workspace folder of the file in the active editor when it is run (else the
// first folder) and keeps following that folder, so a multi-root window's second folder
// is not shown the first one's memories.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { ExecuteCommandRequest, type LanguageClient } from "vscode-languageclient/node";

const SERVER_ATLAS = "moor.atlas";
const REFRESH_MS = 400; // diagnostics come in bursts after a change: send the atlas once

let panel: vscode.WebviewPanel | undefined;
let shownRoot: string | undefined; // the URI of the folder the panel shows
let timer: NodeJS.Timeout | undefined;

type Running = () => LanguageClient | undefined;

async function fetchAtlas(running: LanguageClient, root: string | undefined): Promise<unknown> {
  return running.sendRequest(ExecuteCommandRequest.type, { command: SERVER_ATLAS, arguments: root ? [root] : [] });
}

/** The folder to show: the active editor's, else the first (the server's default too). */
function wantedRoot(): string | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  const folder = (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
  return folder?.uri.toString();
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page: the CLI's body, style and script; the data as JSON no text can close. */
export function atlasHtml(media: string, webview: vscode.Webview, data: unknown): string {
  const read = (name: string): string => readFileSync(path.join(media, name), "utf8");
  const nonce = randomBytes(16).toString("base64");
  const workspace = escapeHtml(String((data as { workspace?: unknown }).workspace ?? ""));
  const json = JSON.stringify(data).replace(/</g, "\\u003c");
  const policy =
    `default-src 'none'; script-src 'nonce-${nonce}'; ` + `style-src 'unsafe-inline' ${webview.cspSource}; img-src data:`;
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="Content-Security-Policy" content="${policy}">` +
    `<title>moor atlas</title><style>${read("atlas.css")}</style></head><body>` +
    read("atlas_body.html").replace("{workspace}", workspace) +
    `<script type="application/json" id="atlas-data">${json}</script>` +
    `<script nonce="${nonce}">${read("atlas.js")}</script></body></html>`
  );
}

export async function showAtlas(context: vscode.ExtensionContext, running: Running, log: vscode.LogOutputChannel): Promise<void> {
  const server = running();
  if (!server?.isRunning()) {
    vscode.window.showWarningMessage("moor: the language server is not running (`moor atlas` writes the page from a terminal).");
    return;
  }
  // Run from the atlas itself (no text editor active), it keeps the folder it shows.
  const root = (vscode.window.activeTextEditor ? wantedRoot() : shownRoot) ?? wantedRoot();
  let data: unknown;
  try {
    data = await fetchAtlas(server, root);
  } catch (error) {
    log.error(`${SERVER_ATLAS}: ${String(error)}`);
    vscode.window.showErrorMessage(`moor: the atlas failed: ${String(error)}`);
    return;
  }
  if (!data) {
    vscode.window.showInformationMessage("moor: no check has finished yet; try again in a moment.");
    return;
  }
  const media = path.join(context.extensionPath, "media");
  const sameRoot = root === shownRoot;
  shownRoot = root;
  if (panel) {
    panel.reveal();
    if (sameRoot) {
      void panel.webview.postMessage({ type: "atlas", data });
    } else {
      panel.webview.html = atlasHtml(media, panel.webview, data); // its heading names the root
    }
    return;
  }
  const opened = vscode.window.createWebviewPanel("moor.atlas", "moor atlas", vscode.ViewColumn.Active, {
    enableScripts: true,
    localResourceRoots: [],
    retainContextWhenHidden: true,
  });
  panel = opened;
  opened.webview.html = atlasHtml(media, opened.webview, data);
  const listener = vscode.languages.onDidChangeDiagnostics(() => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(() => void refresh(running, log), REFRESH_MS);
  });
  opened.onDidDispose(() => {
    listener.dispose();
    if (timer) {
      clearTimeout(timer);
    }
    panel = undefined;
    shownRoot = undefined;
  });
}

async function refresh(running: Running, log: vscode.LogOutputChannel): Promise<void> {
  const server = running();
  if (!panel || !server?.isRunning()) {
    return;
  }
  try {
    const data = await fetchAtlas(server, shownRoot);
    if (data && panel) {
      void panel.webview.postMessage({ type: "atlas", data });
    }
  } catch (error) {
    log.warn(`${SERVER_ATLAS} (refresh): ${String(error)}`);
  }
}
