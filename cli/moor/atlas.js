"use strict";
let data = JSON.parse(document.getElementById("atlas-data").textContent);
const COLOURS = {current:"#2e7d32", drifted:"#e65100", gone:"#c62828", moved:"#1565c0",
  rewritten:"#6a1b9a", unverified:"#757575", unbound:"#00838f", ungrounded:"#9e9d24",
  invalid:"#8e0000", retired:"#9e9e9e"};
let byPath = new Map(data.memories.map(m => [m.path, m]));
const tiles = new Map();
const hiddenStates = new Set();
let folderFilter = null, agentFilter = "", textFilter = "", selected = null, defFilter = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "class") node.className = v;
    else if (k === "style") node.style.cssText = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}
const colour = s => COLOURS[s] || "#607d8b";
function codeFolder(m) {
  const a = m.anchors.find(a => a.file);
  if (!a) return "(not about code)";
  const i = a.file.lastIndexOf("/");
  return i < 0 ? "(root)" : a.file.slice(0, i);
}

function summary() {
  const bar = document.getElementById("summary");
  bar.replaceChildren();
  bar.append(el("strong", {}, data.summary.memories + " memories"));
  for (const state of data.states) {
    const n = data.summary.states[state];
    if (!n) continue;
    const chip = el("button", {class:hiddenStates.has(state) ? "chip off" : "chip", "data-state-filter":state,
      style:"background:" + colour(state), title:"show or hide " + state + " memories",
      onclick:() => { hiddenStates.has(state) ? hiddenStates.delete(state) : hiddenStates.add(state);
        chip.classList.toggle("off"); applyFilters(); }}, n + " " + state);
    bar.append(chip);
  }
  const folders = data.summary.folders;
  const files = folders.reduce((a, f) => a + f.files, 0);
  const covered = folders.reduce((a, f) => a + f.covered, 0);
  const withMemories = folders.filter(f => f.memories > 0).length;
  bar.append(el("span", {id:"coverage-line"}, covered + " of " + files +
    " code files have memories; " + withMemories + " of " + folders.length + " folders"));
}

function coverage() {
  const nav = document.getElementById("coverage");
  nav.replaceChildren();
  nav.append(el("h2", {}, "Coverage by folder"));
  for (const f of data.summary.folders) {
    const share = f.files ? Math.round(100 * f.covered / f.files) : 0;
    const row = el("div", {class:"folder-row", "data-folder":f.folder,
      title:f.covered + " of " + f.files + " files have memories; " + f.memories + " memories",
      onclick:() => { folderFilter = folderFilter === f.folder ? null : f.folder;
        document.getElementById("folder").value = folderFilter === null ? "*" : "=" + folderFilter;
        applyFilters(); }},
      el("span", {}, f.folder || "(root)"),
      el("span", {}, f.covered + "/" + f.files),
      );
    const bar = el("div", {class:"bar"}, el("span", {style:"width:" + share + "%"}));
    row.append(bar);
    nav.append(row);
  }
  nav.append(el("h2", {}, "Code (files \u2192 definitions)"));
  for (const file of data.code) {
    nav.append(el("div", {class:"file", "data-file":file.path, style:"color:" + colour(file.state)}, file.path));
    for (const d of file.definitions) {
      nav.append(el("div", {class:"def", style:"--c:" + colour(d.state),
        title:d.memories.length + " memories, worst " + d.state,
        onclick:() => { defFilter = defFilter === d ? null : d; applyFilters(); }},
        (d.symbol || "(whole file)") + "  [" + d.state + ", " + d.memories.length + "]"));
    }
  }
}

function filters() {
  const agents = [...new Set(data.memories.map(m => m.agent).filter(a => a))].sort();
  const folder = document.getElementById("folder");
  folder.replaceChildren(el("option", {value:"*"}, "every folder"));
  for (const f of data.summary.folders.map(f => f.folder)) folder.append(el("option", {value:"=" + f}, f || "(root)"));
  folder.value = folderFilter === null ? "*" : "=" + folderFilter;
  const agent = document.getElementById("agent");
  agent.replaceChildren(el("option", {value:""}, "every owner"), el("option", {value:"(shared)"}, "shared only"));
  for (const a of agents) agent.append(el("option", {value:a}, "agent " + a));
  agent.value = agentFilter;
}

function listen() {
  const folder = document.getElementById("folder");
  folder.addEventListener("change", () => {
    folderFilter = folder.value === "*" ? null : folder.value.slice(1); applyFilters(); });
  const agent = document.getElementById("agent");
  agent.addEventListener("change", () => { agentFilter = agent.value; applyFilters(); });
  const text = document.getElementById("text");
  text.addEventListener("input", () => { textFilter = text.value.toLowerCase(); applyFilters(); });
  // An editor's view sends the atlas again as states change: {type: "atlas", data}.
  window.addEventListener("message", event => {
    if (!event.data || event.data.type !== "atlas" || !event.data.data) return;
    data = event.data.data;
    byPath = new Map(data.memories.map(m => [m.path, m]));
    defFilter = null;
    draw();
    if (selected && byPath.has(selected)) select(selected);
  });
}

function inFolder(m, folder) {
  return m.anchors.some(a => a.file && (folder === "" ? !a.file.includes("/") :
    a.file.startsWith(folder + "/") && !a.file.slice(folder.length + 1).includes("/")));
}

function applyFilters() {
  let shown = 0;
  for (const [path, tile] of tiles) {
    const m = byPath.get(path);
    let ok = !hiddenStates.has(m.state);
    if (ok && folderFilter !== null) ok = inFolder(m, folderFilter);
    if (ok && agentFilter) ok = agentFilter === "(shared)" ? !m.agent : m.agent === agentFilter;
    if (ok && defFilter) ok = defFilter.memories.includes(path);
    if (ok && textFilter) ok = (m.title + "\n" + m.path + "\n" + m.text + "\n" +
      m.anchors.map(a => a.ref).join("\n")).toLowerCase().includes(textFilter);
    tile.hidden = !ok;
    if (ok) shown++;
  }
  for (const g of document.querySelectorAll("#map .group"))
    g.hidden = !g.querySelector(".memory:not([hidden])");
  for (const r of document.querySelectorAll(".folder-row"))
    r.classList.toggle("selected", r.dataset.folder === folderFilter);
  document.getElementById("shown").textContent = shown + " of " + data.memories.length + " shown";
}

function map() {
  const groups = new Map();
  for (const m of data.memories) {
    const f = codeFolder(m);
    if (!groups.has(f)) groups.set(f, []);
    groups.get(f).push(m);
  }
  const root = document.getElementById("map");
  root.replaceChildren();
  tiles.clear();
  const fragment = document.createDocumentFragment();
  for (const f of [...groups.keys()].sort()) {
    const box = el("div", {class:"tiles"});
    for (const m of groups.get(f)) {
      const tile = el("div", {class:"memory", "data-memory":m.path, "data-state":m.state,
        style:"--c:" + colour(m.state), title:m.path + " \u2014 " + m.state,
        onclick:() => select(m.path)}, el("span", {class:"st"}, m.state), m.title);
      // Marks after the title: a link finding to settle, links, cobound memories.
      if (m.findings.length) tile.append(el("span", {class:"mark warn", title:m.findings.join("\n")}, " \u26A0"));
      if (m.links.length) tile.append(el("span", {class:"mark", title:m.links.length + " links"}, " \u21C4" + m.links.length));
      if (m.cobound.length) tile.append(el("span", {class:"mark", title:m.cobound.length + " cobound"}, " \u2261" + m.cobound.length));
      tiles.set(m.path, tile);
      box.append(tile);
    }
    fragment.append(el("div", {class:"group", "data-group":f}, el("h3", {}, f + " (" + groups.get(f).length + ")"), box));
  }
  root.append(fragment);
}

function link(path) {
  return byPath.has(path) ? el("a", {onclick:() => select(path)}, path) : el("span", {}, path + " (no such memory)");
}

function graph(m) {
  const ns = "http://www.w3.org/2000/svg";
  const around = [];
  for (const l of m.links) around.push({path:l.path, label:(l.direction === "to" ? "\u2192 " : "\u2190 ") + l.relation, dashed:false});
  for (const c of m.cobound) around.push({path:c, label:"cobound", dashed:true});
  const shown = around.slice(0, 24);
  const w = 360, h = 260, cx = w / 2, cy = h / 2, r = 95;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", w); svg.setAttribute("height", h); svg.setAttribute("id", "neighbourhood");
  const node = (x, y, path, state) => {
    const c = document.createElementNS(ns, "circle");
    c.setAttribute("cx", x); c.setAttribute("cy", y); c.setAttribute("r", 9);
    c.setAttribute("fill", colour(state)); c.setAttribute("data-node", path);
    c.addEventListener("click", () => byPath.has(path) && select(path));
    const t = document.createElementNS(ns, "title"); t.textContent = path + " (" + state + ")";
    c.append(t); return c;
  };
  shown.forEach((n, i) => {
    const a = 2 * Math.PI * i / Math.max(shown.length, 1) - Math.PI / 2;
    const x = cx + r * Math.cos(a), y = cy + r * Math.sin(a);
    const line = document.createElementNS(ns, "line");
    line.setAttribute("x1", cx); line.setAttribute("y1", cy); line.setAttribute("x2", x); line.setAttribute("y2", y);
    line.setAttribute("stroke", "#90a4ae"); if (n.dashed) line.setAttribute("stroke-dasharray", "4 3");
    svg.append(line);
    const other = byPath.get(n.path);
    svg.append(node(x, y, n.path, other ? other.state : "invalid"));
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", x + (Math.cos(a) >= 0 ? 11 : -11)); label.setAttribute("y", y + 3);
    label.setAttribute("text-anchor", Math.cos(a) >= 0 ? "start" : "end");
    const name = n.path.split("/").pop().replace(/\.md$/, "");
    label.textContent = n.label + ": " + (name.length > 22 ? name.slice(0, 21) + "\u2026" : name);
    svg.append(label);
  });
  svg.append(node(cx, cy, m.path, m.state));
  return svg;
}

function select(path) {
  const m = byPath.get(path);
  if (selected) tiles.get(selected)?.classList.remove("selected");
  selected = path;
  const tile = tiles.get(path);
  tile.classList.add("selected");
  const d = document.getElementById("detail");
  d.replaceChildren();
  d.append(el("h2", {}, "Memory"), el("div", {}, el("strong", {}, m.title)),
    el("div", {}, el("span", {class:"state-badge", style:"--c:" + colour(m.state)}, m.state), " ", m.path),
    m.agent ? el("div", {}, "agent " + m.agent) : "");
  for (const n of [...m.notes, ...m.findings]) d.append(el("div", {}, "\u26A0 " + n));
  d.append(el("h2", {}, "Text"), el("pre", {}, m.text || "(no text)"));
  d.append(el("h2", {}, "Anchors"));
  const anchors = el("ul");
  for (const a of m.anchors) anchors.append(el("li", {"data-anchor":a.canonical || a.ref},
    el("span", {class:"state-badge", style:"--c:" + colour(a.state)}, a.state), " ", a.ref,
    a.detail ? el("div", {style:"color:#757575"}, a.detail) : ""));
  d.append(anchors);
  if (m.links.length || m.cobound.length) {
    d.append(el("h2", {}, "Links and cobound memories"), graph(m));
    const list = el("ul");
    for (const l of m.links) list.append(el("li", {}, (l.direction === "to" ? "\u2192 " : "\u2190 ") + l.relation + " ", link(l.path)));
    for (const c of m.cobound) list.append(el("li", {}, "cobound ", link(c)));
    d.append(list);
  }
  d.append(el("h2", {}, "History"));
  const history = el("ul");
  for (const e of m.history) history.append(el("li", {}, e.at.replace("T", " ").slice(0, 19) + "  " +
    e.kind + (e.code ? " (" + e.code + ")" : "") + "  " + e.anchor + (e.detail ? "  " + e.detail : "") + (e.reason ? " \u2014 " + e.reason : "")));
  if (!m.history.length) history.append(el("li", {}, "nothing journalled"));
  d.append(history);
}

const started = performance.now();
function draw() { summary(); filters(); coverage(); map(); applyFilters(); }
listen(); draw();
// `atlas.html#memory=PATH` opens with that memory shown (a link to one memory).
const wanted = decodeURIComponent(location.hash.replace(/^#memory=/, ""));
if (location.hash.startsWith("#memory=") && byPath.has(wanted)) select(wanted);
// Since navigation began (the page read, its data parsed) and for drawing alone: what
// bench/atlas_scale.py publishes as the time to first render.
document.documentElement.dataset.firstRenderMs = String(Math.round(performance.now()));
document.documentElement.dataset.renderMs = String(Math.round(performance.now() - started));
document.documentElement.dataset.rendered = "true";
