// The raylake web page: asks the service's HTTP API (/examples, /ask, /tables) and draws the
// answer. Plain DOM, no framework; every value from the lake goes in as text, never as HTML.
// Marks for bench/ui_timing.py (Performance API): "raylake:rendered" once an answer is painted.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const NODE_W = 170, NODE_H = 46, COL_W = 310, ROW_H = 84, PAD = 20, REJ_W = 190, REJ_H = 56, REJ_TOP = 34;
const $ = (id) => document.getElementById(id);
let lastAnswer = null, lastAsked = null;

// ------------------------------------------------------------------ the API

function token() { return sessionStorage.getItem("raylake-token") || ""; }

// The JSON of a call, or an Error with the service's one-line message; `raw` returns the Response.
async function api(path, body, raw) {
  const headers = {};
  if (token()) headers.Authorization = "Bearer " + token();
  const init = { headers };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(new URL(path, document.baseURI), init);
  if (raw && r.ok) return r;
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  if (!r.ok) {
    const msg = data && data.error ? data.error.message : `HTTP ${r.status}`;
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return data;
}

function tablePath(p) { return "tables/" + p.split("/").map(encodeURIComponent).join("/"); }

// ------------------------------------------------------------------ small DOM helpers

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function fmt(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function dataTable(columns, rows, caption) {
  const t = el("table", { class: "data" });
  if (caption) t.append(el("caption", { class: "sr-only", text: caption }));
  t.append(el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { scope: "col", text: c })))));
  const tb = el("tbody");
  for (const r of rows) {
    const cells = Array.isArray(r) ? r : columns.map((c) => r[c]);
    tb.append(el("tr", {}, ...cells.map((v) => el("td", { class: typeof v === "number" ? "num" : "", text: fmt(v) }))));
  }
  t.append(tb);
  return el("div", { class: "scroll" }, t);
}

function short(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }
function roleClass(role) { return "role-" + String(role || "joined").replace(/\s+/g, "-"); }

function showError(msg) {
  $("error").textContent = msg;
  $("error").hidden = !msg;
}

function setStatus(msg) { $("status").textContent = msg; }

// ------------------------------------------------------------------ token and examples

function needToken(msg) {
  $("token-box").hidden = false;
  setStatus(msg || "This service needs a token: enter it above.");
  $("token").focus();
}

async function loadExamples() {
  let data;
  try {
    data = await api("examples");
  } catch (e) {
    if (e.status === 401) { needToken(token() ? "That token was refused: enter the right one." : null); return; }
    showError(e.message);
    return;
  }
  $("token-box").hidden = true;
  if (data.max_budget) $("budget").max = data.max_budget;
  const box = $("examples");
  box.replaceChildren();
  for (const q of data.examples || []) {
    const b = el("button", { type: "button", class: "example", text: q });
    b.addEventListener("click", () => { $("question").value = q; ask(); });
    box.append(b);
  }
  setStatus(`${data.tables} tables in this lake. Ask a question, or pick an example.`);
  searchLake();
}

// ------------------------------------------------------------------ asking

async function ask() {
  const question = $("question").value;
  const body = { question, fuse: true, preview: 20, answer: true };
  const budget = $("budget").value.trim();
  if (budget) body.budget = Number(budget);
  showError("");
  $("ask").disabled = true;
  setStatus("Asking…");
  const t0 = performance.now();
  try {
    const ans = await api("ask", body);
    lastAsked = { question, budget: body.budget };
    render(ans);
    // After the next frame is painted (a task queued from requestAnimationFrame runs after it).
    requestAnimationFrame(() => setTimeout(() => performance.mark("raylake:rendered"), 0));
    setStatus(`${ans.tables.length} table${ans.tables.length === 1 ? "" : "s"} answer this question ` +
              `(${Math.round(performance.now() - t0)} ms).`);
  } catch (e) {
    if (e.status === 401) needToken("This service needs a token: enter it above, then ask again.");
    $("results").hidden = true;
    setStatus("");
    showError(e.message);
  } finally {
    $("ask").disabled = false;
  }
}

function render(ans) {
  lastAnswer = ans;
  $("results").hidden = false;
  $("profile").hidden = true;
  const n = (ans.rejected || []).length;
  $("rejected-toggle").hidden = !n;
  $("rejected-count").textContent = String(n);
  renderPlan(ans);
  renderIntent(ans.intent);
  renderAnswer(ans);
  renderFused(ans.fused);
  renderTimings(ans.timings_ms || {});
}

// ------------------------------------------------------------------ the plan graph

// Columns by join depth from the first table; a union shard sits under the table it extends,
// inside one box with it (a shard cluster), so each fused part reads as one group.
function layout(ans) {
  const tables = ans.tables.map((t) => t.table);
  const root = {}, col = {};
  for (const t of tables) root[t] = t;
  for (const s of ans.plan || []) if (s.op === "union" && s.anchor) root[s.new] = root[s.anchor] || s.anchor;
  const clusterOf = (t) => root[t] || t;
  for (const s of ans.plan || []) {
    if (s.op === "start") col[clusterOf(s.new)] = 0;
    else if (s.op === "join") {
      const a = clusterOf(s.anchor);
      if (col[a] === undefined) col[a] = 0;
      if (col[clusterOf(s.new)] === undefined) col[clusterOf(s.new)] = col[a] + 1;
    }
  }
  const clusters = [];
  for (const t of tables) {
    const c = clusterOf(t);
    if (col[c] === undefined) col[c] = 0;
    let cl = clusters.find((x) => x.root === c);
    if (!cl) { cl = { root: c, members: [] }; clusters.push(cl); }
    if (t === c) cl.members.unshift(t); else cl.members.push(t);
  }
  const used = {}, pos = {};
  for (const cl of clusters) {
    const c = col[cl.root];
    const r0 = used[c] || 0;
    cl.members.forEach((t, i) => { pos[t] = { x: PAD + c * COL_W, y: PAD + (r0 + i) * ROW_H }; });
    cl.col = c; cl.row0 = r0;
    used[c] = r0 + cl.members.length;
  }
  const ncol = Math.max(1, ...Object.values(col).map((c) => c + 1));
  const nrow = Math.max(1, ...Object.values(used));
  return { pos, clusters, width: PAD * 2 + (ncol - 1) * COL_W + NODE_W, height: PAD * 2 + (nrow - 1) * ROW_H + NODE_H };
}

function edgeLabel(s) {
  if (s.op === "join") {
    const k = s.keys || {};
    return `${k.anchor_column} = ${k.new_column} · ${fmt(s.edge_score)}`;
  }
  const m = Object.entries(s.mapping || {}).map(([a, b]) => `${a}→${b}`).join(", ");
  return `∪ ${m} · ${fmt(s.edge_score)}`;
}

function renderPlan(ans) {
  const box = $("plan");
  box.replaceChildren();
  $("plan-summary").textContent = ans.tables.length
    ? `score ${fmt(ans.score)} · ${ans.tables.length} tables · intent from ${ans.intent_source || "?"}`
    : (ans.reason || "No table answers this question.");
  if (!ans.tables.length) return;
  const L = layout(ans);
  // Tables the search considered and left out, on demand: a grid under the plan, as wide as it
  // (at least four across), so the plan keeps its scale.
  const rejected = $("show-rejected").checked ? (ans.rejected || []) : [];
  const across = Math.max(4, Math.floor((L.width - 2 * PAD + REJ_W - NODE_W) / REJ_W));
  const ry = L.height + REJ_TOP;
  const width = rejected.length ? Math.max(L.width, 2 * PAD + (Math.min(across, rejected.length) - 1) * REJ_W + NODE_W) : L.width;
  const height = rejected.length ? ry + Math.ceil(rejected.length / across) * REJ_H - (REJ_H - NODE_H) + PAD : L.height;
  const g = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "group",
                         "aria-label": "Plan: tables and how they join" });
  for (const cl of L.clusters) {
    if (cl.members.length < 2) continue;
    const p = L.pos[cl.root];
    g.append(svg("rect", { class: "cluster", x: p.x - 8, y: p.y - 8, rx: 8, width: NODE_W + 16,
                           height: (cl.members.length - 1) * ROW_H + NODE_H + 16, "data-cluster": cl.root }));
  }
  for (const s of ans.plan || []) {
    if (!s.anchor || !L.pos[s.anchor] || !L.pos[s.new]) continue;
    const a = L.pos[s.anchor], b = L.pos[s.new];
    const e = svg("g", { class: `edge ${s.op}`, "data-from": s.anchor, "data-to": s.new, "data-op": s.op });
    const title = svg("title");
    title.textContent = `${s.op} ${s.anchor} → ${s.new}: ${edgeLabel(s)}`;
    e.append(title);
    const lines = [];
    if (Math.abs(a.x - b.x) < 1) { // a union shard, right under its table: a short line, the mapping beside it
      const x = a.x + 14, [top, bot] = a.y < b.y ? [a, b] : [b, a];
      e.append(svg("path", { d: `M${x},${top.y + NODE_H} L${x},${bot.y}` }));
      lines.push([x + 6, top.y + NODE_H + 14, "start", short(edgeLabel(s), 30)]);
    } else { // a join, across the gap between columns: keys above the curve, score below
      const [l, r] = a.x < b.x ? [a, b] : [b, a];
      const x1 = l.x + NODE_W, y1 = l.y + NODE_H / 2, x2 = r.x, y2 = r.y + NODE_H / 2, mx = (x1 + x2) / 2;
      e.append(svg("path", { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}` }));
      const k = s.keys || {};
      lines.push([mx, (y1 + y2) / 2 - 6, "middle", short(`${k.anchor_column} = ${k.new_column}`, 24)]);
      lines.push([mx, (y1 + y2) / 2 + 14, "middle", `join ${fmt(s.edge_score)}`]);
    }
    for (const [x, y, anchor, text] of lines) {
      for (const cls of ["bg", "fg"]) {
        const t = svg("text", { x, y, "text-anchor": anchor, class: cls });
        t.textContent = text;
        e.append(t);
      }
    }
    g.append(e);
  }
  for (const t of ans.tables) {
    const p = L.pos[t.table];
    g.append(tableNode(t.table, p.x, p.y, roleClass(t.role), `${t.role} · ${fmt(t.rows)} rows`,
                       `${t.table}, ${t.role}, ${t.rows} rows: show its profile`, { "data-role": t.role }));
  }
  if (rejected.length) {
    const head = svg("text", { x: PAD, y: ry - 10, class: "rejected-head" });
    head.textContent = "considered by the search, left out of the plan";
    g.append(head);
  }
  rejected.forEach((r, i) => {
    g.append(tableNode(r.table, PAD + (i % across) * REJ_W, ry + Math.floor(i / across) * REJ_H, "rejected", whyConsidered(r),
                       `${r.table}, considered and left out (${whyConsidered(r)}): show its profile`, { "data-rejected": "true" }));
  });
  box.append(g);
}

// Why the search looked at a table it left out: the model's probability, the atoms it anchors.
function whyConsidered(r) {
  const why = [];
  if (r.relevance !== undefined) why.push(`p ${fmt(r.relevance)}`);
  if ((r.anchor_of || []).length) why.push(`anchor: ${r.anchor_of.join(", ")}`);
  return why.join(" · ") || "candidate";
}

function tableNode(path, x, y, cls, subText, label, attrs) {
  const n = svg("g", { class: `node ${cls}`, "data-table": path, tabindex: "0", role: "button",
                       transform: `translate(${x},${y})`, "aria-label": label, ...attrs });
  const title = svg("title");
  title.textContent = label;
  n.append(title, svg("rect", { width: NODE_W, height: NODE_H, rx: 6, class: cls }));
  const name = svg("text", { x: 8, y: 18 });
  name.textContent = short(path, 26);
  const sub = svg("text", { x: 8, y: 36, class: "sub" });
  sub.textContent = short(subText, 27);
  n.append(name, sub);
  n.addEventListener("click", () => openProfile(path));
  n.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openProfile(path); }
  });
  return n;
}

// ------------------------------------------------------------------ a table's profile

async function openProfile(path) {
  for (const n of document.querySelectorAll(".node")) n.classList.toggle("selected", n.dataset.table === path);
  const panel = $("profile"), body = $("profile-body");
  panel.hidden = false;
  $("profile-h").textContent = path;
  body.replaceChildren(el("p", { class: "hint", text: "Loading…" }));
  let prof;
  try {
    prof = await api(tablePath(path));
  } catch (e) {
    body.replaceChildren(el("p", { class: "error", text: e.message }));
    return;
  }
  const find = (list) => (list || []).find((t) => t.table === path);
  const left = lastAnswer && find(lastAnswer.rejected);
  const mine = (lastAnswer && find(lastAnswer.tables)) || left || {};
  const where = mine.role ? ` · ${mine.role} in this plan` : left ? ` · considered and left out (${whyConsidered(left)})` : "";
  body.replaceChildren(
    el("p", { text: `${fmt(prof.n_rows)} rows · ${prof.columns.length} columns` + where }),
    el("h3", { text: "Supports (atoms of the question)" }),
    (mine.supports || []).length
      ? dataTable(["atom", "text", "support"], mine.supports.map((s) => [s.atom, s.text, s.support]), "atoms this table supports")
      : el("p", { class: "hint", text: "No atom of the question." }),
    el("h3", { text: "Columns" }),
    dataTable(["name", "type", "distinct", "nulls", "key-like", "sample"],
              prof.columns.map((c) => [c.name, c.dtype, c.n_distinct, c.null_frac, c.key_like ? "yes" : "",
                                       (c.sample || []).slice(0, 3).map(fmt).join(", ")]), "columns"),
    el("h3", { text: `Neighbours (${prof.edges.length} edges)` }),
    neighbours(path, prof.edges),
  );
  panel.dataset.table = path;
  $("profile-h").focus();
}

// The tables one edge away, strongest edge per (kind, table) first; each opens its own profile.
function neighbours(path, edges) {
  const best = new Map();
  for (const e of edges) {
    const out = e.src_table === path;
    const other = out ? e.dst_table : e.src_table;
    const key = `${e.kind} ${other}`;
    if (best.has(key) && best.get(key).score >= e.score) continue;
    const via = e.kind === "join"
      ? `${out ? e.src_column : e.dst_column} = ${out ? e.dst_column : e.src_column}`
      : Object.entries(e.mapping || {}).map(([a, b]) => `${a}→${b}`).join(", ");
    best.set(key, { kind: e.kind, table: other, via, score: e.score });
  }
  const rows = [...best.values()].sort((a, b) => b.score - a.score || a.table.localeCompare(b.table));
  if (!rows.length) return el("p", { class: "hint", text: "No join or union edge: this table stands alone." });
  const t = el("table", { class: "data neighbours" }, el("caption", { class: "sr-only", text: "join and union neighbours" }),
               el("thead", {}, el("tr", {}, ...["kind", "table", "via", "score"].map((c) => el("th", { scope: "col", text: c })))));
  const tb = el("tbody");
  for (const r of rows.slice(0, 30)) {
    const b = el("button", { type: "button", class: "link neighbour", "data-table": r.table, text: r.table,
                             "aria-label": `open ${r.table}, ${r.kind} neighbour` });
    b.addEventListener("click", () => openProfile(r.table));
    tb.append(el("tr", { "data-kind": r.kind }, el("td", { text: r.kind }), el("td", {}, b), el("td", { text: r.via }),
                 el("td", { class: "num", text: fmt(r.score) })));
  }
  t.append(tb);
  const wrap = el("div", { class: "scroll" }, t);
  return rows.length > 30 ? el("div", {}, wrap, el("p", { class: "hint", text: `strongest 30 of ${rows.length}` })) : wrap;
}

// ------------------------------------------------------------------ the lake browser

let lakeTimer = null, lakeSeq = 0;

async function searchLake() {
  const q = $("lake-q").value.trim();
  const seq = ++lakeSeq;  // answers may come back out of order while the user types: keep the last
  let got;
  try {
    got = await api(`tables?q=${encodeURIComponent(q)}&limit=50`);
  } catch (e) {
    if (seq === lakeSeq) $("lake-summary").textContent = e.message;
    return;
  }
  if (seq !== lakeSeq) return;
  $("lake-summary").textContent = q
    ? `${got.total} table${got.total === 1 ? "" : "s"} match “${q}”` + (got.total > got.tables.length ? ` (first ${got.tables.length})` : "")
    : `${got.total} tables` + (got.total > got.tables.length ? ` (first ${got.tables.length})` : "");
  const list = $("lake-results");
  list.replaceChildren();
  for (const t of got.tables) {
    const b = el("button", { type: "button", class: "link lake-table", "data-table": t.table, text: t.table });
    b.addEventListener("click", () => openProfile(t.table));
    const cols = t.matched_columns.length ? ` · columns ${t.matched_columns.join(", ")}` : "";
    list.append(el("li", {}, b, el("span", { class: "hint",
      text: ` ${fmt(t.n_rows)} rows · ${t.n_columns} columns · ${t.join} join / ${t.union} union edges${cols}` })));
  }
}

// ------------------------------------------------------------------ download

async function download(format) {
  const status = $("download-status");
  if (!lastAsked) return;
  const body = { question: lastAsked.question, format };
  if (lastAsked.budget) body.budget = lastAsked.budget;
  status.textContent = `Preparing fused.${format}…`;
  let r;
  try {
    r = await api("ask", body, true);
  } catch (e) {
    status.textContent = e.message;
    return;
  }
  const blob = await r.blob();
  const a = el("a", { href: URL.createObjectURL(blob), download: `fused.${format}` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  // The file comes from a second search of the same question: say so if its plan differs.
  const tables = (r.headers.get("X-Raylake-Tables") || "").split(",").filter(Boolean);
  const same = lastAnswer && tables.join(",") === lastAnswer.tables.map((t) => t.table).join(",");
  status.textContent = `Downloaded fused.${format}: ${r.headers.get("X-Raylake-Rows") || "?"} rows, ${fmt(blob.size)} bytes` +
    (same ? "." : ` (the search chose ${tables.join(", ")} this time).`);
  status.dataset.format = format;
}

// ------------------------------------------------------------------ intent, answer, fused, timings

function renderIntent(intent) {
  const box = $("intent");
  box.replaceChildren();
  if (!intent || !(intent.trees || []).length) { box.append(el("p", { class: "hint", text: "No intent graph." })); return; }
  const names = {};
  for (const t of intent.trees) {
    names[t.tree_id] = t.entity;
    for (const a of t.attributes || []) names[a.attribute_id] = a.name;
  }
  const list = el("ul", { class: "intent", "aria-label": "entities of the question" });
  for (const t of intent.trees) {
    const ev = t.evidence || {};
    const tables = (ev.tables || []).slice(0, 2).join(", ");
    const attrs = el("ul");
    for (const a of t.attributes || []) {
      const cols = ((a.evidence || {}).columns || []).map((c) => `${c[0]}.${c[1]}`).join(", ");
      const vals = (a.values || []).map((v) => `${v.operator || "="} ${fmt(v.value !== undefined ? v.value : v)}`).join(", ");
      attrs.append(el("li", {}, "attribute ", el("span", { class: "atom", text: a.name }),
                      vals ? ` ${vals}` : "", cols ? el("span", { class: "grounded", text: ` → ${cols}` }) : null));
    }
    list.append(el("li", { class: "intent-tree" }, "entity ", el("span", { class: "atom", text: t.entity }),
                   tables ? el("span", { class: "grounded", text: ` → ${tables}` }) : null, attrs));
  }
  box.append(list);
  if ((intent.joins || []).length) {
    box.append(el("h3", { text: "Joins" }));
    const jl = el("ul");
    for (const j of intent.joins) {
      const lake = (j.evidence || {}).lake;
      jl.append(el("li", {}, `${names[j.from_tree]}.${names[j.from_attribute]} ↔ ${names[j.to_tree]}.${names[j.to_attribute]}`,
                   lake ? el("span", { class: "grounded", text: ` (${lake[0]}.${lake[1]} = ${lake[2]}.${lake[3]})` }) : null));
    }
    box.append(jl);
  }
}

function renderAnswer(ans) {
  const box = $("answer");
  box.replaceChildren();
  const a = ans.answer;
  if (!ans.sql || !a) {
    box.append(el("p", { class: "hint", text: ans.answer_reason || "No answer query for this question; the fused table below holds the data." }));
    return;
  }
  box.append(dataTable(a.columns, a.rows, "answer rows"));
  if (a.total_rows > a.rows.length) box.append(el("p", { class: "hint", text: `first ${a.rows.length} of ${a.total_rows} rows` }));
  for (const w of a.warnings || []) box.append(el("p", { class: "hint", text: "⚠ " + w }));
  const det = el("details", {}, el("summary", { text: "SQL" }), el("pre", { class: "sql", text: ans.sql }));
  box.append(det);
}

function renderFused(f) {
  const box = $("fused");
  box.replaceChildren();
  $("downloads").hidden = !f;
  $("download-status").textContent = "";
  if (!f) { box.append(el("p", { class: "hint", text: "Nothing fused." })); return; }
  const parts = (f.parts || []).map((p) => `${p.label} (${p.tables.length > 1 ? p.tables.length + " shards, " : ""}${p.rows} rows)`).join(" ⋈ ");
  box.append(el("p", { text: `${f.rows} rows${f.truncated ? " (truncated)" : ""} · ${f.columns.length} columns · ${parts}` }));
  for (const w of f.warnings || []) box.append(el("p", { class: "hint", text: "⚠ " + w }));
  const rows = f.preview || [];
  box.append(rows.length ? dataTable(f.columns, rows, "fused table preview") : el("p", { class: "hint", text: "No rows." }));
  if (rows.length && rows.length < f.rows) box.append(el("p", { class: "hint", text: `first ${rows.length} of ${f.rows} rows` }));
}

function renderTimings(t) {
  const box = $("timings");
  box.replaceChildren();
  const stages = Object.entries(t).filter(([k]) => k !== "total");
  const top = Math.max(1, ...stages.map(([, v]) => v));
  const table = el("table", { class: "data" }, el("caption", { class: "sr-only", text: "time per stage" }),
                   el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "stage" }), el("th", { scope: "col", text: "ms" }),
                                      el("th", { scope: "col", text: "" }))));
  const tb = el("tbody");
  for (const [k, v] of stages.concat(t.total !== undefined ? [["total", t.total]] : [])) {
    const bar = el("span", { class: "bar" });
    bar.style.width = `${Math.max(1, Math.round((Math.min(v, top) / top) * 160))}px`;
    tb.append(el("tr", {}, el("td", { text: k }), el("td", { class: "num", text: fmt(Math.round(v * 10) / 10) }),
                  el("td", {}, k === "total" ? null : bar)));
  }
  table.append(tb);
  box.append(table);
}

// ------------------------------------------------------------------ start

document.addEventListener("DOMContentLoaded", () => {
  $("ask-form").addEventListener("submit", (ev) => { ev.preventDefault(); ask(); });
  $("question").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); ask(); }
  });
  $("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    sessionStorage.setItem("raylake-token", $("token").value.trim());
    $("token").value = "";
    loadExamples();
  });
  $("show-rejected").addEventListener("change", () => { if (lastAnswer) renderPlan(lastAnswer); });
  for (const b of document.querySelectorAll("#downloads button")) b.addEventListener("click", () => download(b.dataset.format));
  $("lake-form").addEventListener("submit", (ev) => { ev.preventDefault(); clearTimeout(lakeTimer); searchLake(); });
  $("lake-q").addEventListener("input", () => { clearTimeout(lakeTimer); lakeTimer = setTimeout(searchLake, 200); });
  $("profile-close").addEventListener("click", () => {
    const path = $("profile").dataset.table;
    $("profile").hidden = true;
    const from = path && (document.querySelector(`.node[data-table="${CSS.escape(path)}"]`) ||
                          document.querySelector(`.lake-table[data-table="${CSS.escape(path)}"]`));
    if (from) from.focus();
  });
  if (document.body.dataset.token === "required" && !token()) needToken();
  else loadExamples();
});
