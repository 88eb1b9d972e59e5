// mgtrace explorer: renders the view models of package explore (model.go)
// that `analyze serve` answers over its HTTP API, or that `analyze report`
// put in the page as JSON. Plain JavaScript, no build step; the graph is
// laid out by @dagrejs/dagre (static/vendor) and drawn as SVG.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const GRAPH_LIMIT = 250; // nodes the server sends before collapsing into groups (dagre lays 250 out in about 0.2 s)

  // ---- data access: the one place that knows server from report ----

  // A report holds its models in <script id="mgtrace-data">; a served page
  // asks the server. Both answer api(path, params) with the same models.
  const embedded = (function () {
    const el = document.getElementById("mgtrace-data");
    if (!el) return null;
    try {
      return JSON.parse(el.textContent);
    } catch (e) {
      return { error: "the report's data cannot be read: " + e.message };
    }
  })();

  // Timestamps the report has a graph for, in order.
  const reportTS = embedded && embedded.graphs
    ? Object.keys(embedded.graphs).map(Number).sort((a, b) => a - b) : [];

  function reportAnswer(path, p) {
    const d = embedded;
    if (d.error) throw new Error(d.error);
    switch (path) {
      case "run": return d.run;
      case "timeline": return d.timeline;
      case "findings": return d.findings;
      case "files": return d.files || { files: [] };
      case "graph": {
        const g = d.graphs && d.graphs[String(p.ts)];
        if (!g) throw new Error("this report has no graph at timestamp " + p.ts);
        return g;
      }
      case "moment": {
        // at=seq:N -> the latest moment the report holds at or before N.
        const m = /^seq:(\d+)$/.exec(String(p.at));
        const seq = m ? Number(m[1]) : 0;
        let best = null;
        for (const ts of reportTS) {
          const at = d.graphs[String(ts)].at;
          if (at.seq <= seq || best === null) best = at;
        }
        if (!best) throw new Error("this report holds no moments");
        return best;
      }
      case "node": {
        const n = d.nodes && d.nodes[String(p.id)];
        if (!n) throw new Error("this report has no history of node " + p.id);
        return n;
      }
      case "source": {
        const s = d.sources && d.sources[p.file];
        if (!s) throw new Error("this report does not hold " + p.file);
        return s;
      }
    }
    throw new Error("a report cannot answer " + path);
  }

  async function api(path, params) {
    const p = params || {};
    if (embedded) return reportAnswer(path, p);
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(p)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
    const r = await fetch("api/" + path + (q.toString() ? "?" + q : ""));
    let body;
    try {
      body = await r.json();
    } catch (e) {
      throw new Error(path + ": HTTP " + r.status);
    }
    if (!r.ok) throw new Error(body && body.error ? body.error : path + ": HTTP " + r.status);
    return body;
  }

  // ---- state ----

  const state = {
    run: null,
    findings: null,
    files: null,
    timeline: null,
    graph: null,
    source: null, // the Source shown
    node: null, // selected node id (number) or null
    history: null,
    ts: 0,
    file: "",
    line: 0,
    expand: new Set(),
  };
  let pending = 0;
  let graphSeq = 0; // answers to an older graph request are dropped

  function busy(delta) {
    pending += delta;
    document.body.dataset.busy = pending > 0 ? "1" : "0";
    if (pending === 0) document.body.dataset.ready = "1";
  }

  function status(msg, isError) {
    const s = $("status");
    s.textContent = msg || "";
    s.style.color = isError ? "#fca5a5" : "";
    if (isError) document.body.dataset.error = msg;
  }

  async function guarded(what, fn) {
    busy(1);
    try {
      return await fn();
    } catch (e) {
      status(what + ": " + e.message, true);
      return null;
    } finally {
      busy(-1);
    }
  }

  // ---- URL: ?ts=&node=&file=&line= (and expand=) ----

  function readURL() {
    const q = new URLSearchParams(location.search);
    const num = (k) => (q.has(k) && q.get(k) !== "" && !isNaN(Number(q.get(k))) ? Number(q.get(k)) : null);
    return {
      ts: num("ts"),
      node: num("node"),
      file: q.get("file") || "",
      line: num("line") || 0,
      expand: (q.get("expand") || "").split(",").filter(Boolean),
    };
  }

  function writeURL(push) {
    const q = new URLSearchParams();
    q.set("ts", state.ts);
    if (state.node !== null) q.set("node", state.node);
    if (state.file) q.set("file", state.file);
    if (state.line) q.set("line", state.line);
    if (state.expand.size) q.set("expand", [...state.expand].join(","));
    const url = "?" + q.toString();
    if (url === location.search) return;
    try {
      if (push) history.pushState(null, "", url);
      else history.replaceState(null, "", url);
    } catch (e) {
      // file:// pages in some browsers refuse; the view still works.
    }
  }

  // ---- navigation ----

  // goTo moves the view: any of ts, node, file, line. push adds a history
  // entry (a person's action); the slider replaces it instead.
  async function goTo(v, push) {
    let graphChanged = false;
    if (v.ts !== undefined && v.ts !== null && v.ts !== state.ts) {
      state.ts = clampTS(v.ts);
      graphChanged = true;
    }
    if (v.expand) {
      state.expand = new Set(v.expand);
      graphChanged = true;
    }
    if (v.node !== undefined && v.node !== state.node) {
      state.node = v.node;
      loadNode();
    }
    if (v.file !== undefined && v.file !== state.file) {
      state.file = v.file;
      state.line = v.line || 0;
      await loadSource();
    } else if (v.line !== undefined && v.line !== state.line) {
      state.line = v.line;
      renderSource();
    }
    writeURL(push !== false);
    syncMomentBar();
    if (graphChanged || !state.graph) await loadGraph();
    else renderGraphMarks();
  }

  function clampTS(ts) {
    if (embedded) {
      if (!reportTS.length) return 0;
      // the nearest timestamp the report holds
      let best = reportTS[0];
      for (const t of reportTS) if (Math.abs(t - ts) < Math.abs(best - ts)) best = t;
      return best;
    }
    const max = state.run ? state.run.changes : ts;
    return Math.max(0, Math.min(max, ts));
  }

  // ---- moment bar: slider, steps, moments ----

  function sliderToTS(v) {
    return embedded ? reportTS[Number(v)] || 0 : Number(v);
  }
  function tsToSlider(ts) {
    return embedded ? Math.max(0, reportTS.indexOf(ts)) : ts;
  }

  function setupMomentBar() {
    const sl = $("slider");
    sl.max = embedded ? Math.max(0, reportTS.length - 1) : state.run.changes;
    let timer = null;
    sl.addEventListener("input", () => {
      const ts = sliderToTS(sl.value);
      $("moment-label").textContent = "ts " + ts + " …";
      clearTimeout(timer);
      timer = setTimeout(() => goTo({ ts }, false), 120); // debounced
    });
    const step = (d) => {
      if (embedded) {
        const i = reportTS.indexOf(state.ts) + d;
        if (i >= 0 && i < reportTS.length) goTo({ ts: reportTS[i] });
      } else goTo({ ts: state.ts + d });
    };
    $("prev-change").onclick = () => step(-1);
    $("next-change").onclick = () => step(1);
    const moments = (state.run.moments || []).slice().sort((a, b) => a.ts - b.ts);
    $("prev-moment").onclick = () => {
      const m = moments.filter((x) => x.ts < state.ts).pop();
      if (m) goTo({ ts: m.ts });
    };
    $("next-moment").onclick = () => {
      const m = moments.find((x) => x.ts > state.ts);
      if (m) goTo({ ts: m.ts });
    };
    const sel = $("moments");
    sel.innerHTML = "";
    sel.appendChild(new Option("moments that matter (" + moments.length + ")", ""));
    for (const m of moments) sel.appendChild(new Option((m.label || "moment") + " · ts " + m.ts, m.ts));
    sel.onchange = () => {
      if (sel.value !== "") goTo({ ts: Number(sel.value) });
      sel.value = "";
    };
  }

  function syncMomentBar() {
    const sl = $("slider");
    sl.value = tsToSlider(state.ts);
    const moments = state.run ? state.run.moments || [] : [];
    const here = moments.filter((m) => m.ts === state.ts).map((m) => m.label).filter(Boolean);
    const g = state.graph && state.graph.at.ts === state.ts ? state.graph.at : null;
    const ml = $("moment-label");
    ml.textContent = "ts " + state.ts + (g ? " · event " + g.seq : "") + (here.length ? " · " + here.join(", ") : "");
    ml.title = ml.textContent;
    $("prev-change").disabled = embedded ? reportTS.indexOf(state.ts) <= 0 : state.ts <= 0;
    $("next-change").disabled = embedded
      ? reportTS.indexOf(state.ts) >= reportTS.length - 1
      : state.run && state.ts >= state.run.changes;
    drawTimelineCursor();
  }

  // ---- timeline ----

  let tlRange = null; // {from, to} when zoomed

  async function loadTimeline(from, to) {
    const w = Math.max(100, Math.floor($("timeline").getBoundingClientRect().width / 2));
    const t = await guarded("timeline", () => api("timeline", { from, to, buckets: Math.min(w, 1000) }));
    if (!t) return;
    state.timeline = t;
    drawTimeline();
  }

  function el(name, attrs, parent, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function tlGeometry() {
    const svg = $("timeline");
    const W = svg.getBoundingClientRect().width || 800;
    const H = svg.getBoundingClientRect().height || 96;
    const t = state.timeline;
    const span = Math.max(1, t.to - t.from);
    return { W, H, t, x: (seq) => ((seq - t.from) / span) * W, seq: (x) => Math.round(t.from + (x / W) * span) };
  }

  function drawTimeline() {
    const svg = $("timeline");
    svg.innerHTML = "";
    const t = state.timeline;
    if (!t) return;
    const { W, H, x } = tlGeometry();
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    $("timeline-range").textContent = "events " + t.from + "–" + t.to + (t.dropped ? " (" + t.dropped + " marks not shown)" : "");
    $("timeline-reset").disabled = !tlRange || !!embedded;
    const n = (t.changes || []).length || (t.threads[0] ? t.threads[0].events.length : 0);
    if (!n) return;
    const bw = W / n;
    const top = 10;
    // graph changes per bucket, a band on top
    const maxC = Math.max(1, ...(t.changes || [0]));
    (t.changes || []).forEach((c, i) => {
      if (c) el("rect", { class: "chg", x: i * bw, y: top - (8 * c) / maxC, width: Math.max(bw, 1), height: (8 * c) / maxC }, svg);
    });
    const lanes = t.threads.length || 1;
    const laneH = (H - top - 2) / lanes;
    t.threads.forEach((th, li) => {
      const y0 = top + 2 + li * laneH;
      const maxE = Math.max(1, ...th.events);
      const maxD = Math.max(1, ...(th.depth || [0]));
      // activity: a light band whose strength is the thread's events in
      // the bucket; over it the call depth as a filled step curve.
      let path = "M0," + (y0 + laneH - 2);
      th.events.forEach((e, i) => {
        if (e) el("rect", { class: "act", x: i * bw, y: y0, width: Math.max(bw, 1), height: laneH - 2, opacity: (0.25 + (0.75 * e) / maxE).toFixed(2) }, svg);
        const d = th.depth ? th.depth[i] : 0;
        const y = y0 + laneH - 2 - ((laneH - 6) * d) / maxD;
        path += " L" + i * bw + "," + y + " L" + (i + 1) * bw + "," + y;
      });
      path += " L" + W + "," + (y0 + laneH - 2) + " Z";
      el("path", { class: "depth", d: path }, svg).appendChild(titled("call depth (deepest per bucket, up to " + maxD + ")"));
      if (th.calls) {
        // the outermost function's name where it changes, when there is room
        let lastName = "", lastX = -1e9;
        th.calls.forEach((c, i) => {
          if (c && c !== lastName && i * bw - lastX > 60) {
            el("text", { class: "call-label", x: i * bw + 2, y: y0 + laneH - 4 }, svg, c);
            lastX = i * bw;
          }
          lastName = c;
        });
      }
      el("text", { class: "lane-label", x: 2, y: y0 + 10 }, svg, "thread " + th.thread);
    });
    // C-points and markers are ticks on top; what was found crosses the lanes.
    const minor = (k) => k === "cpoint" || k === "marker";
    const pts = (t.points || []).slice().sort((a, b) => minor(b.kind) - minor(a.kind));
    for (const p of pts) {
      const px = x(p.seq);
      const ln = el("line", { class: "pt " + p.kind, x1: px, x2: px, y1: 0, y2: minor(p.kind) ? top : H }, svg);
      ln.appendChild(titled(p.kind + ": " + p.label + " (event " + p.seq + ", ts " + p.ts + ")"));
    }
    drawTimelineCursor();
  }

  function titled(text) {
    const t = document.createElementNS(SVG, "title");
    t.textContent = text;
    return t;
  }

  function drawTimelineCursor() {
    const svg = $("timeline");
    const old = svg.querySelector(".cursor");
    if (old) old.remove();
    if (!state.timeline || !state.graph) return;
    const { H, x } = tlGeometry();
    const px = x(state.graph.at.seq);
    el("line", { class: "cursor", x1: px, x2: px, y1: 0, y2: H }, svg);
  }

  function setupTimeline() {
    const svg = $("timeline");
    let down = null;
    let selRect = null;
    svg.addEventListener("mousedown", (e) => {
      down = e.offsetX;
      selRect = el("rect", { class: "sel", x: down, y: 0, width: 0, height: "100%" }, svg);
    });
    svg.addEventListener("mousemove", (e) => {
      if (down === null || !selRect) return;
      selRect.setAttribute("x", Math.min(down, e.offsetX));
      selRect.setAttribute("width", Math.abs(e.offsetX - down));
    });
    svg.addEventListener("mouseup", async (e) => {
      if (down === null || !state.timeline) return;
      const a = down;
      const b = e.offsetX;
      down = null;
      if (selRect) selRect.remove();
      const g = tlGeometry();
      if (Math.abs(b - a) > 6 && !embedded) {
        const from = g.seq(Math.min(a, b));
        const to = g.seq(Math.max(a, b));
        if (to > from) {
          tlRange = { from, to };
          await loadTimeline(from, to);
        }
        return;
      }
      // a click: the nearest mark within 5 pixels, else the moment at the event
      let best = null;
      for (const p of state.timeline.points || []) {
        const d = Math.abs(g.x(p.seq) - b);
        if (d <= 5 && (!best || d < best.d)) best = { d, p };
      }
      if (best) return goTo({ ts: best.p.ts });
      const m = await guarded("moment", () => api("moment", { at: "seq:" + Math.max(0, g.seq(b)) }));
      if (m) goTo({ ts: m.ts });
    });
    $("timeline-reset").onclick = () => {
      tlRange = null;
      loadTimeline();
    };
    let rt = null;
    window.addEventListener("resize", () => {
      clearTimeout(rt);
      rt = setTimeout(() => (tlRange ? loadTimeline(tlRange.from, tlRange.to) : loadTimeline()), 200);
    });
  }

  // ---- graph ----

  async function loadGraph() {
    const my = ++graphSeq;
    const ts = state.ts;
    const g = await guarded("graph", () =>
      api("graph", { ts, expand: [...state.expand].join(","), limit: GRAPH_LIMIT }));
    if (my !== graphSeq || !g) return;
    state.graph = g;
    status(state.run && state.run.building ? "building… " + Math.round(100 * state.run.progress) + "%" : "");
    drawGraph();
    syncMomentBar();
    if (state.node !== null) {
      loadFields();
      for (const li of $("node-history").children) li.classList.toggle("current", li.dataset.ts === String(state.ts));
    }
  }

  const view = { x: 0, y: 0, w: 800, h: 600, fit: null };

  function nodeKey(n) {
    return n.group ? n.group : String(n.id);
  }

  function basename(p) {
    return p ? p.split("/").pop() : "";
  }

  function stmtText(s) {
    if (!s) return "";
    if (s.file) return basename(s.file) + ":" + s.line + (s.function ? " " + s.function : "");
    return (s.function ? s.function + " " : "") + s.pc;
  }

  function nodeLines(n) {
    if (n.group) return [n.label || n.group, n.count + " nodes" + (n.type ? " · " + n.type : ""), "click to expand"];
    const l1 = n.label || "#" + n.id;
    const l2 = [n.type, n.head ? "head " + n.head : "", n.bytes ? n.bytes + " B" : "", n.kind === "freed" ? "freed" : ""]
      .filter(Boolean).join(" · ");
    const l3 = n.site ? "@ " + stmtText(n.site) : "";
    return [l1, l2, l3].filter(Boolean);
  }

  function drawGraph() {
    const svg = $("graph");
    svg.innerHTML = "";
    const g = state.graph;
    svg.dataset.ts = g.at.ts;
    svg.dataset.nodes = g.nodes.length;
    svg.dataset.edges = g.edges.length;
    svg.dataset.totalNodes = g.total_nodes;
    svg.dataset.totalEdges = g.total_edges;
    $("graph-info").textContent =
      g.total_nodes + " nodes, " + g.total_edges + " edges" + (g.collapsed ? " (collapsed: " + g.nodes.length + " shown)" : "");
    $("change-info").innerHTML = "";
    if (g.change) {
      const c = g.change;
      const span = document.createElement("span");
      span.innerHTML = '<span class="tag change">change ' + c.ts + "</span>";
      span.appendChild(document.createTextNode(
        c.kind + (c.node ? " #" + c.node : "") + (c.field ? "." + c.field : "") + (c.value ? " = " + c.value : "") +
        (c.stmt ? "  " + stmtText(c.stmt) : "")));
      if (c.stmt && c.stmt.file) {
        span.style.cursor = "pointer";
        span.onclick = () => goTo({ file: c.stmt.file, line: c.stmt.line });
      }
      $("change-info").appendChild(span);
    }
    if (!g.nodes.length) {
      el("text", { class: "empty", x: 20, y: 30 }, svg, "no live nodes at timestamp " + g.at.ts);
      view.fit = view.first = { x: 0, y: 0, w: 400, h: 100 };
      applyView(true);
      return;
    }
    const dg = layout(g);
    const loops = dg.loops;
    const edges = el("g", { class: "edges" }, svg);
    el("defs", {}, svg).innerHTML =
      '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#64748b"/></marker>';
    for (const ed of dg.edges()) {
      const d = dg.edge(ed);
      const pts = d.points || [];
      if (!pts.length) continue;
      const ge = el("g", { class: "edge" + (d.e.marked ? " marked" : "") }, edges);
      el("path", { d: "M" + pts.map((p) => p.x + "," + p.y).join(" L"), "marker-end": "url(#arrow)" }, ge);
      if (d.label) {
        // labels are not laid out (that doubles dagre's work): at the path's middle
        const mid = pts[Math.floor(pts.length / 2)];
        el("text", { x: mid.x + 3, y: mid.y - 3 }, ge, d.label + (d.e.count > 1 ? " ×" + d.e.count : ""));
      }
      ge.appendChild(titled(d.e.from + " → " + d.e.to + " ." + d.e.field + (d.e.stmt ? " (" + stmtText(d.e.stmt) + ")" : "")));
    }
    // Self-loops (a node or group pointing into itself): arcs on the right.
    const loopCount = {};
    for (const e of loops) {
      const d = dg.node(e.from);
      const k = (loopCount[e.from] = (loopCount[e.from] || 0) + 1) - 1;
      const x0 = d.x + d.width / 2;
      const y0 = d.y - d.height / 2 + 4 + ((k * 12) % Math.max(12, d.height - 8));
      const r = 10 + 4 * k;
      const ge = el("g", { class: "edge loop" + (e.marked ? " marked" : "") }, edges);
      el("path", { d: "M" + x0 + "," + y0 + " C" + (x0 + 2 * r) + "," + (y0 - r) + " " + (x0 + 2 * r) + "," + (y0 + r + 8) + " " + x0 + "," + (y0 + 8), "marker-end": "url(#arrow)" }, ge);
      el("text", { x: x0 + 2 * r + 4, y: y0 + 8 }, ge, e.field + (e.count > 1 ? " ×" + e.count : ""));
      ge.appendChild(titled(e.from + " → itself ." + e.field));
    }
    const nodes = el("g", { class: "nodes" }, svg);
    for (const k of dg.nodes()) {
      const d = dg.node(k);
      const n = d.n;
      const gn = el("g", { class: "node " + (n.group ? "group" : n.kind), transform: "translate(" + (d.x - d.width / 2) + "," + (d.y - d.height / 2) + ")" }, nodes);
      gn.dataset.key = k;
      if (!n.group) gn.dataset.id = n.id;
      for (const m of n.marks || []) gn.classList.add(m);
      el("rect", { width: d.width, height: d.height }, gn);
      d.lines.forEach((s, i) => el("text", { x: 6, y: 14 + 13 * i, class: i ? "sub" : "" }, gn, s));
      gn.appendChild(titled((n.marks && n.marks.length ? "[" + n.marks.join(", ") + "] " : "") + d.lines.join("\n")));
      gn.addEventListener("click", (ev) => {
        ev.stopPropagation();
        if (n.group) {
          const ex = new Set(state.expand);
          ex.add(n.group);
          goTo({ expand: [...ex] });
        } else goTo({ node: n.id });
      });
    }
    // Fit the whole graph, never drawn larger than its natural size.
    const gi = dg.graph();
    const box = svg.getBoundingClientRect();
    const gw = (gi.width || 100) + (loops.length ? 120 : 0);
    const gh = gi.height || 100;
    const s = Math.max(gw / (box.width || gw), gh / (box.height || gh), 1);
    const vw = (box.width || gw) * s;
    const vh = (box.height || gh) * s;
    view.fit = { x: (gw - vw) / 2, y: Math.min(0, (gh - vh) / 2), w: vw, h: vh };
    view.first = view.fit;
    if (s > 2.5) {
      // Too large to read whole: open at a readable scale on the node
      // that matters (the change's, else a marked one, else the first);
      // "fit" shows it all.
      const rank = (n) => ((n.marks || []).includes("change") ? 0 : (n.marks || []).length ? 1 : 2);
      let focus = null;
      for (const k of dg.nodes()) {
        const d = dg.node(k);
        if (!focus || rank(d.n) < rank(focus.n)) focus = d;
      }
      const rw = (box.width || gw) * 1.4;
      const rh = (box.height || gh) * 1.4;
      view.first = { x: focus.x - rw / 2, y: focus.y - rh / 2, w: rw, h: rh };
    }
    applyView(!view.kept);
    renderGraphMarks();
  }

  // layout lays g out with dagre. Moving through changes mostly keeps the
  // same nodes and edges (a store of a value, a pointer moved back): the
  // last few layouts are kept by the shape's signature and reused, with
  // this moment's nodes and edges (marks, labels) put in.
  const layouts = new Map();
  function layout(g) {
    const lines = new Map();
    for (const n of g.nodes) lines.set(nodeKey(n), nodeLines(n));
    const sig = g.nodes.map((n) => nodeKey(n) + ":" + Math.max(...lines.get(nodeKey(n)).map((s) => s.length)) + "x" + lines.get(nodeKey(n)).length).join(",") +
      "|" + g.edges.map((e) => e.from + ">" + e.to).join(",");
    let dg = layouts.get(sig);
    const fresh = !dg;
    if (fresh) {
      dg = new dagre.graphlib.Graph({ multigraph: true });
      dg.setGraph({ rankdir: g.nodes.length > 60 ? "LR" : "TB", nodesep: 18, ranksep: 40, edgesep: 8, marginx: 10, marginy: 10 });
      dg.setDefaultEdgeLabel(() => ({}));
    }
    for (const n of g.nodes) {
      const k = nodeKey(n);
      const ls = lines.get(k);
      if (fresh) dg.setNode(k, { width: Math.max(60, 12 + 6.2 * Math.max(...ls.map((s) => s.length))), height: 8 + 13 * ls.length });
      Object.assign(dg.node(k), { n, lines: ls });
    }
    dg.loops = [];
    g.edges.forEach((e, i) => {
      if (!dg.hasNode(e.from) || !dg.hasNode(e.to)) return;
      if (e.from === e.to) return dg.loops.push(e); // drawn by hand
      if (fresh) dg.setEdge(e.from, e.to, {}, "e" + i);
      Object.assign(dg.edge(e.from, e.to, "e" + i), { e, label: e.field });
    });
    if (fresh) {
      const t0 = performance.now();
      dagre.layout(dg);
      document.body.dataset.layoutMs = Math.round(performance.now() - t0);
      layouts.set(sig, dg);
      if (layouts.size > 8) layouts.delete(layouts.keys().next().value);
    }
    return dg;
  }

  function renderGraphMarks() {
    for (const gn of $("graph").querySelectorAll(".node")) {
      gn.classList.toggle("selected", state.node !== null && gn.dataset.id === String(state.node));
    }
  }

  // applyView sets the viewBox: fit "all" shows the whole graph, true the
  // first view of a new graph (a readable part of a large one).
  function applyView(fit) {
    if (fit === "all" && view.fit) Object.assign(view, view.fit);
    else if (fit && (view.first || view.fit)) Object.assign(view, view.first || view.fit);
    $("graph").setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" "));
  }

  function setupGraphPanZoom() {
    const svg = $("graph");
    svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = svg.getBoundingClientRect();
      const f = e.deltaY > 0 ? 1.15 : 1 / 1.15;
      const mx = view.x + ((e.clientX - r.left) / r.width) * view.w;
      const my = view.y + ((e.clientY - r.top) / r.height) * view.h;
      view.w *= f;
      view.h *= f;
      view.x = mx - (mx - view.x) * f;
      view.y = my - (my - view.y) * f;
      view.kept = true;
      applyView(false);
    }, { passive: false });
    let drag = null;
    svg.addEventListener("mousedown", (e) => (drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y }));
    window.addEventListener("mouseup", () => (drag = null));
    svg.addEventListener("mousemove", (e) => {
      if (!drag) return;
      const r = svg.getBoundingClientRect();
      view.x = drag.vx - ((e.clientX - drag.x) / r.width) * view.w;
      view.y = drag.vy - ((e.clientY - drag.y) / r.height) * view.h;
      view.kept = true;
      applyView(false);
    });
    $("graph-fit").onclick = () => {
      view.kept = false;
      applyView("all");
    };
  }

  // ---- node history ----

  async function loadNode() {
    const list = $("node-history");
    list.innerHTML = "";
    renderGraphMarks();
    if (state.node === null) {
      $("node-title").textContent = "click a node";
      $("node-fields").hidden = true;
      return;
    }
    const id = state.node;
    const h = await guarded("node", () => api("node", { id }));
    if (!h || state.node !== id) return;
    state.history = h;
    loadFields();
    $("node-title").textContent = "#" + h.id + (h.type ? " " + h.type : "") + (h.site ? " allocated at " + stmtText(h.site) : "");
    for (const ev of h.events) list.appendChild(historyItem(ev));
    addMore(h);
  }

  // historyItem is one entry of a node's history.
  function historyItem(ev) {
    const li = document.createElement("li");
    li.dataset.ts = ev.ts;
    if (ev.ts === state.ts) li.classList.add("current");
    const what = ev.kind === "store"
      ? "store " + (ev.field || "+" + ev.offset) + (ev.value ? " = " + ev.value : "")
      : ev.kind;
    li.innerHTML = '<span class="loc">ts ' + ev.ts + "</span> ";
    li.appendChild(document.createTextNode(what + " "));
    const loc = document.createElement("span");
    loc.className = "loc";
    loc.textContent = stmtText(ev.stmt) + (ev.thread ? " · thread " + ev.thread : "");
    li.appendChild(loc);
    li.onclick = () => goTo(ev.stmt && ev.stmt.file ? { ts: ev.ts, file: ev.stmt.file, line: ev.stmt.line } : { ts: ev.ts });
    return li;
  }

  // addMore offers the rest of a history cut by the server (after=K).
  function addMore(h) {
    const list = $("node-history");
    if (!h.more || !h.events.length || embedded) return;
    const li = document.createElement("li");
    li.className = "more";
    li.textContent = "… more events";
    li.onclick = async () => {
      const id = h.id;
      const next = await guarded("node", () => api("node", { id, after: h.events[h.events.length - 1].index }));
      if (!next || state.node !== id) return;
      li.remove();
      for (const ev of next.events) list.appendChild(historyItem(ev));
      addMore(next);
    };
    list.appendChild(li);
  }

  // The node's fields at the moment, as explore/state knows them (a
  // served page only: a report holds no memory).
  async function loadFields() {
    const tb = $("node-fields");
    if (embedded || state.node === null) {
      tb.hidden = true;
      return;
    }
    const id = state.node;
    const ts = state.ts;
    let v;
    try {
      v = await api("state", { ts, node: id });
    } catch (e) {
      tb.hidden = true; // freed before, not yet built, ...: the history says enough
      return;
    }
    if (state.node !== id || state.ts !== ts) return;
    const n = v.nodes && v.nodes[0];
    tb.innerHTML = "";
    if (!n || !n.fields || !n.fields.length) {
      tb.hidden = true;
      return;
    }
    const cap = document.createElement("caption");
    cap.textContent = "at ts " + ts + ": " + n.status + (n.type ? " " + n.type : "") + " at " + n.addr;
    tb.appendChild(cap);
    for (const f of n.fields.slice(0, 64)) {
      const tr = document.createElement("tr");
      const name = document.createElement("td");
      name.textContent = f.name;
      const val = document.createElement("td");
      val.className = "v";
      const known = f.bytes && f.bytes.every((b) => b !== null);
      val.textContent = f.value || (known ? f.bytes.map((b) => b.toString(16).padStart(2, "0")).join(" ") : "unknown");
      if (!f.value && !known) val.classList.add("unknown");
      if (f.points_to) {
        tr.className = "ptr";
        val.textContent += " → #" + f.points_to;
        val.onclick = () => goTo({ node: f.points_to });
      }
      tr.append(name, val);
      tb.appendChild(tr);
    }
    tb.hidden = false;
  }

  // ---- findings ----

  function renderFindings() {
    const ul = $("findings");
    ul.innerHTML = "";
    const f = state.findings || {};
    // details: [{text, stmt, ts}] listed under the finding once it is
    // clicked (a fault's changes, a bug's value propagation chains).
    const add = (kind, tagText, text, stmt, ts, key, details) => {
      const li = document.createElement("li");
      li.className = "finding-item " + kind;
      li.dataset.kind = kind;
      if (key !== undefined) li.dataset.key = key;
      li.innerHTML = '<span class="tag ' + kind + '">' + tagText + "</span>";
      li.appendChild(document.createTextNode(text + " "));
      const loc = document.createElement("span");
      loc.className = "loc";
      loc.textContent = stmtText(stmt);
      li.appendChild(loc);
      const go = (st, t) => {
        const v = {};
        if (t !== undefined && t !== null) v.ts = t;
        if (st && st.file) {
          v.file = st.file;
          v.line = st.line;
        }
        goTo(v);
      };
      li.onclick = () => {
        go(stmt, ts);
        if (!details || !details.length || li.querySelector("ol")) return;
        const ol = document.createElement("ol");
        ol.className = "details";
        for (const d of details.slice(0, 100)) {
          const di = document.createElement("li");
          di.textContent = d.text + " ";
          const l = document.createElement("span");
          l.className = "loc";
          l.textContent = stmtText(d.stmt);
          di.appendChild(l);
          di.onclick = (e) => {
            e.stopPropagation();
            go(d.stmt, d.ts);
          };
          ol.appendChild(di);
        }
        li.appendChild(ol);
      };
      ul.appendChild(li);
    };
    // The crash and the faults first: violations can be many.
    const SHOW = 200;
    const more = (n, what) => {
      if (n <= SHOW) return;
      const li = document.createElement("li");
      li.className = "more";
      li.textContent = "… " + (n - SHOW) + " more " + what + " (the timeline marks them)";
      ul.appendChild(li);
    };
    if (f.crash) add("crash", "crash", f.crash.signal + (f.crash.addr ? " at " + f.crash.addr : ""), f.crash.where, f.crash.at.ts, 0);
    (f.faults || []).slice(0, SHOW).forEach((x, i) => {
      const first = x.changes && x.changes.length ? x.changes[0].ts : undefined;
      const changes = (x.changes || []).map((c) => ({
        text: "ts " + c.ts + ": " + c.kind + (c.node ? " #" + c.node : "") + (c.field ? "." + c.field : "") + (c.value ? " = " + c.value : ""),
        stmt: c.stmt, ts: c.ts,
      }));
      add("fault", "fault " + x.rank, x.why, x.stmt, first, i, changes);
    });
    more((f.faults || []).length, "faults");
    (f.bugs || []).slice(0, SHOW).forEach((b, i) => {
      const chains = [];
      (b.chains || []).forEach((ch, ci) => ch.forEach((st, si) => chains.push({ text: "chain " + (ci + 1) + (si ? " ←" : ":"), stmt: st })));
      add("bug", b.rule, b.message, b.where, b.at.ts, i, chains);
    });
    more((f.bugs || []).length, "bugs");
    (f.violations || []).slice(0, SHOW).forEach((v, i) => add("violation", "violation", v.text, v.where, v.at.ts, i));
    more((f.violations || []).length, "violations");
    if (f.slice) {
      const s0 = f.slice.lines[0];
      add("slice", "slice", f.slice.criterion + ": " + f.slice.lines.length + " lines", s0, undefined, 0);
    }
    if (!ul.children.length) ul.innerHTML = "<li>nothing found</li>";
  }

  // ---- source ----

  async function loadFiles() {
    const f = await guarded("files", () => api("files"));
    state.files = f ? f.files : [];
    const sel = $("files");
    sel.innerHTML = "";
    sel.appendChild(new Option("source file…", ""));
    for (const x of state.files) {
      sel.appendChild(new Option(x.path + (x.marks ? " (" + x.marks + " marks)" : "") + (x.available ? "" : " [no text]"), x.path));
    }
    sel.onchange = () => sel.value && goTo({ file: sel.value, line: 0 });
  }

  async function loadSource() {
    $("files").value = state.file;
    if (!state.file) {
      state.source = null;
      renderSource();
      return;
    }
    const file = state.file;
    const s = await guarded("source", () => api("source", { file }));
    if (state.file !== file) return;
    state.source = s;
    renderSource();
  }

  function renderSource() {
    const tb = $("source").querySelector("tbody");
    tb.innerHTML = "";
    const s = state.source;
    $("source-info").textContent = s ? (s.available ? "" : "text not available: lines that ran only") : "";
    $("files").value = state.file;
    if (!s) return;
    let selected = null;
    const frag = document.createDocumentFragment();
    for (const ln of s.lines) {
      const tr = document.createElement("tr");
      tr.id = "L" + ln.n;
      tr.dataset.line = ln.n;
      if (ln.count) tr.classList.add("ran");
      for (const m of ln.marks || []) tr.classList.add(m.kind);
      if (ln.n === state.line) {
        tr.classList.add("selected");
        selected = tr;
      }
      const n = document.createElement("td");
      n.className = "n";
      n.textContent = ln.n;
      n.onclick = () => goTo({ line: ln.n });
      const c = document.createElement("td");
      c.className = "c";
      c.textContent = ln.count ? ln.count : "";
      const m = document.createElement("td");
      m.className = "m";
      // one tag per kind (a line can carry hundreds of violations); a
      // click goes to the first of them that has a moment, or the next
      // one after the current moment.
      const kinds = new Map();
      for (const mk of ln.marks || []) {
        if (!kinds.has(mk.kind)) kinds.set(mk.kind, []);
        kinds.get(mk.kind).push(mk);
      }
      for (const [kind, list] of kinds) {
        const t = document.createElement("span");
        t.className = "tag " + kind;
        t.textContent = kind + (list.length > 1 ? " ×" + list.length : "");
        t.title = list.slice(0, 5).map((mk) => mk.label + (mk.at ? " (ts " + mk.at.ts + ")" : "")).join("\n") +
          (list.length > 5 ? "\n… " + (list.length - 5) + " more" : "");
        const timed = list.filter((mk) => mk.at);
        if (timed.length) {
          t.onclick = () => {
            const next = timed.find((mk) => mk.at.ts > state.ts) || timed[0];
            goTo({ ts: next.at.ts, line: ln.n });
          };
        }
        m.appendChild(t);
      }
      const t = document.createElement("td");
      t.className = "t";
      t.textContent = ln.text;
      tr.append(n, c, m, t);
      frag.appendChild(tr);
    }
    tb.appendChild(frag);
    document.body.dataset.line = state.line;
    document.body.dataset.file = state.file;
    if (selected) {
      // centre the line vertically; never scroll sideways (long lines)
      const box = $("source-box");
      box.scrollTop = Math.max(0, selected.offsetTop - box.clientHeight / 2);
      box.scrollLeft = 0;
    }
  }

  // ---- start ----

  // Where the explorer first looks in the source: the top fault when a
  // violation is the initial moment, else the crash, else the first bug.
  function initialLine(run, f) {
    if (!f) return null;
    const lbl = run.initial.label || "";
    if (f.faults && f.faults.length && (lbl.includes("violation") || !f.crash)) return f.faults[0].stmt;
    if (f.crash && f.crash.where.file) return f.crash.where;
    if (f.bugs && f.bugs.length) return f.bugs[0].where;
    if (f.faults && f.faults.length) return f.faults[0].stmt;
    return null;
  }

  async function start() {
    document.body.dataset.mode = embedded ? "report" : "server";
    if (embedded) document.querySelector(".hint").textContent = "click: go to that moment (a report holds the moments that matter)";
    busy(1);
    try {
      const run = await guarded("run", () => api("run"));
      if (!run) return;
      state.run = run;
      $("run-title").textContent = run.program || run.trace;
      $("run-info").textContent = run.events + " events · " + run.changes + " changes · " + run.threads.length + " thread(s)" + (run.spec ? " · spec " + run.spec : "");
      const notes = (run.notes || []).concat(embedded && embedded.notes ? embedded.notes : []);
      if (notes.length) {
        $("notes").hidden = false;
        $("notes").textContent = notes.join(" · ");
      }
      setupMomentBar();
      setupTimeline();
      setupGraphPanZoom();
      const [f] = await Promise.all([guarded("findings", () => api("findings")), loadFiles(), loadTimeline()]);
      state.findings = f;
      renderFindings();
      const u = readURL();
      const v = { ts: u.ts !== null ? u.ts : run.initial.ts, node: u.node, expand: u.expand };
      if (u.file) {
        v.file = u.file;
        v.line = u.line;
      } else {
        const s = u.ts === null ? initialLine(run, f) : null;
        if (s && s.file) {
          v.file = s.file;
          v.line = s.line;
        } else {
          // nothing found: the most executed file that can be read
          const fs = (state.files || []).filter((x) => x.available).sort((a, b) => b.count - a.count);
          if (fs.length) v.file = fs[0].path;
        }
      }
      state.ts = -1; // force the first graph
      await goTo(v, false);
      window.addEventListener("popstate", () => {
        const w = readURL();
        goTo({ ts: w.ts !== null ? w.ts : state.run.initial.ts, node: w.node, file: w.file, line: w.line, expand: w.expand }, false);
      });
    } finally {
      busy(-1);
    }
  }

  // Keys: left/right step a change, with shift a moment that matters.
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input:not([type=range]), select, textarea")) return;
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    e.preventDefault();
    const right = e.key === "ArrowRight";
    $(e.shiftKey ? (right ? "next-moment" : "prev-moment") : (right ? "next-change" : "prev-change")).click();
  });

  // The browser tests and a curious person's console read the state here.
  window.mgtrace = { state, goTo, api, mode: embedded ? "report" : "server" };
  document.addEventListener("DOMContentLoaded", start);
})();
