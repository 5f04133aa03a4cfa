// sandloop console: live updates, keyboard, relative times. Every page reads correctly without it.
"use strict";

(function () {
  const $ = (selector, root) => (root || document).querySelector(selector);
  const $$ = (selector, root) => Array.from((root || document).querySelectorAll(selector));

  // ---- relative times (the exact time stays in the title) --------------------------------
  const UNITS = [[86400, "d"], [3600, "h"], [60, "min"], [1, "s"]];
  function ago(iso) {
    const seconds = (Date.now() - Date.parse(iso)) / 1000;
    if (!(seconds >= 5)) return "just now";
    for (const [size, unit] of UNITS) if (seconds >= size) return Math.floor(seconds / size) + " " + unit + " ago";
    return "just now";
  }
  function refreshTimes() {
    for (const time of $$("time[datetime]")) time.textContent = ago(time.getAttribute("datetime"));
  }
  setInterval(refreshTimes, 30000);

  // ---- keyboard: j/k select, Enter opens, / searches, ? helps, f follows -------------------
  let selected = -1;
  function rows() { return $$("[data-row], ol.lines li:not(.hidden-by-node)"); }
  function select(step) {
    const all = rows();
    if (!all.length) return;
    if (all[selected]) all[selected].classList.remove("selected");
    selected = Math.max(0, Math.min(all.length - 1, selected + step));
    all[selected].classList.add("selected");
    all[selected].scrollIntoView({ block: "nearest" });
  }
  function openSelected(newTab) {
    const row = rows()[selected];
    const link = row && $("a[href]", row);
    if (!link) return;
    if (newTab) window.open(link.href, "_blank", "noopener"); else link.click();
  }
  const keys = $("#keys");
  const keysButton = $("#keys-open");
  if (keys && keysButton) {
    keysButton.hidden = false;
    keysButton.addEventListener("click", () => keys.showModal());
  }
  // WCAG 2.1.4: single-key shortcuts can be turned off (in the keys dialog; kept in localStorage)
  const KEYS_OFF = "sandloop.keys.off";
  function shortcutsOn() {
    try { return window.localStorage.getItem(KEYS_OFF) !== "1"; } catch (error) { return true; }
  }
  const keysOn = $("#keys-on");
  if (keysOn) {
    keysOn.closest("label").hidden = false;
    keysOn.checked = shortcutsOn();
    keysOn.addEventListener("change", () => {
      try {
        if (keysOn.checked) window.localStorage.removeItem(KEYS_OFF); else window.localStorage.setItem(KEYS_OFF, "1");
      } catch (error) { keysOn.checked = true; }
    });
  }
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey || !shortcutsOn()) return;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    if (event.key === "j") select(1);
    else if (event.key === "k") select(-1);
    else if (event.key === "Enter" && selected >= 0 && !(target && target.closest && target.closest("a,button"))) openSelected(event.shiftKey);
    else if (event.key === "/" && $("[data-search]")) { $("[data-search]").focus(); }
    else if (event.key === "?" && keys) keys.showModal();
    else if (event.key === "f" && $("#follow")) { $("#follow").click(); }
    else return;
    event.preventDefault();
  });

  // ---- the runs list: rows change in place; new runs are announced, not inserted ----------
  const runs = $("#runs[data-live]");
  if (runs && window.EventSource) {
    const source = new EventSource(runs.dataset.live + (runs.dataset.live.includes("?") ? "&" : "?") +
      "ids=" + encodeURIComponent($$("tr[data-row]", runs).map((row) => row.id.slice(4)).join(",")));
    source.addEventListener("row", (event) => {
      const data = JSON.parse(event.data);
      const row = document.getElementById("run-" + data.id);
      if (!row) return;
      const wasSelected = row.classList.contains("selected");
      const holder = document.createElement("tbody");
      holder.innerHTML = data.html;  // rendered and escaped by the server's template
      const fresh = holder.firstElementChild;
      if (wasSelected) fresh.classList.add("selected");
      row.replaceWith(fresh);
    });
    source.addEventListener("new", (event) => {
      const data = JSON.parse(event.data);
      const notice = $("#new-runs");
      if (!notice || runs.dataset.first !== "yes") return;
      notice.textContent = "";
      const link = document.createElement("a");
      link.href = window.location.href;
      link.textContent = data.count + (data.count === 1 ? " new run" : " new runs") + ": show";
      notice.append(link);
      notice.hidden = false;
    });
  }

  // ---- a run page: backlog rendered by the server, then the live tail after its last id ----
  const stream = $("[data-stream]");
  if (stream && window.EventSource) followRun(stream);

  function followRun(box) {
    const list = $("ol.lines", box);
    const scroller = $(".lines-box", box);
    const follow = $("#follow");
    let nodeFilter = "";
    const NODE_OF = /^\s*\[(?:setup|attempt \d+|turn \d+|check|[^\]]{1,40})\]\s+([A-Za-z_][\w-]*)/;

    function atBottom() { return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24; }
    function toBottom() { if (follow && follow.checked) scroller.scrollTop = scroller.scrollHeight; }
    if (follow) {
      follow.closest("label").hidden = false;
      follow.addEventListener("change", toBottom);
      scroller.addEventListener("scroll", () => {
        if (!atBottom() && follow.checked && scroller.dataset.auto !== "1") follow.checked = false;
        else if (atBottom() && !follow.checked) follow.checked = true;
        scroller.dataset.auto = "";
      });
      toBottom();
    }

    function addLine(number, text) {
      const item = document.createElement("li");
      item.id = "L" + number;
      const anchor = document.createElement("a");
      anchor.href = "#L" + number;
      anchor.textContent = String(number);
      anchor.setAttribute("aria-label", "line " + number);
      const body = document.createElement("span");
      body.textContent = text;  // text, never markup
      item.append(anchor, body);
      const match = NODE_OF.exec(text);
      if (match) item.dataset.node = match[1];
      if (nodeFilter && item.dataset.node !== nodeFilter) item.classList.add("hidden-by-node");
      const keep = follow && follow.checked;
      const empty = $("p.empty", scroller);  // "No line yet."
      if (empty) empty.remove();
      list.append(item);
      const count = $("#line-count");
      if (count && !count.textContent.includes("showing")) count.textContent = number + " line(s)";
      if (keep) { scroller.dataset.auto = "1"; scroller.scrollTop = scroller.scrollHeight; }
    }

    function setNode(name, cls) {
      const graph = $("svg.graph");
      if (!graph) return;
      for (const node of $$(".node.running", graph)) node.classList.remove("running");
      const node = $('.node[data-node="' + CSS.escape(name) + '"]', graph);
      if (node) {
        node.classList.remove("done", "failed");
        node.classList.add(cls);
      }
      const label = $("#current-node");
      if (label) label.textContent = cls === "running" ? name : "";
      if (cls === "running") sayWaiting(false);
      const note = $("#running-note");
      const waiting = $("#node-waiting");
      if (note) note.hidden = cls !== "running" && !(waiting && !waiting.hidden);
    }

    function sayWaiting(waiting) {  // a run waiting for a reply says so, not "Running: listen"
      const running = $("#node-running");
      const said = $("#node-waiting");
      if (!running || !said) return;
      running.hidden = waiting;
      said.hidden = !waiting;
      if (waiting) $("#running-note").hidden = false;
    }

    function setStatus(value) {
      const state = $("#run-status");  // looked up each time: the end replaces it
      if (!state) return;
      state.textContent = value;
      state.className = "status s-" + value;
      for (const said of $$("[data-status-text]")) said.textContent = value;  // "The check is running"
      sayWaiting(value === "waiting");
    }

    function filterByNode(name) {
      nodeFilter = nodeFilter === name ? "" : name;
      for (const item of $$("li", list)) {
        item.classList.toggle("hidden-by-node", Boolean(nodeFilter) && item.dataset.node !== nodeFilter);
      }
      for (const node of $$("svg.graph .node")) node.classList.toggle("selected", node.dataset.node === nodeFilter);
      const note = $("#node-filter");
      if (note) note.textContent = nodeFilter ? "Showing the lines of " + nodeFilter + " only (click it again for all)." : "";
    }
    function bindGraph() {
      for (const link of $$("svg.graph a[data-node]")) {
        link.addEventListener("click", (event) => { event.preventDefault(); filterByNode(link.dataset.node); });
      }
      if (nodeFilter) for (const node of $$("svg.graph .node")) node.classList.toggle("selected", node.dataset.node === nodeFilter);
    }
    bindGraph();

    // The end changes the facts, buttons, attempts (a check's verdicts), summary and files: take them from
    // the ended page, rendered (and escaped) by the server, each [data-ends] part by its id (run.html,
    // check.html); the lines stay as streamed.
    function showEnded(status) {
      fetch(window.location.pathname + window.location.search, { credentials: "same-origin" })
        .then((response) => { if (!response.ok) throw new Error(response.status); return response.text(); })
        .then((html) => {
          const ended = new DOMParser().parseFromString(html, "text/html");
          for (const part of $$("[data-ends]")) {
            const fresh = ended.getElementById(part.id);
            if (fresh) part.replaceWith(document.importNode(fresh, true));
          }
          bindGraph();
          const note = $("#run-notice");
          const endedNote = ended.getElementById("run-notice");
          if (note && endedNote && !endedNote.hidden) { note.className = endedNote.className; note.textContent = endedNote.textContent; }
          else if (note) note.textContent = "The run ended (" + status + ").";
          refreshTimes();
        })
        .catch(() => {});  // the notice's link still shows the ended page
    }

    let number = Number(box.dataset.lines || "0");
    const url = box.dataset.stream;
    const source = new EventSource(url);
    source.addEventListener("line", (event) => { number += 1; addLine(number, JSON.parse(event.data).text); });
    source.addEventListener("node_started", (event) => setNode(JSON.parse(event.data).node, "running"));
    source.addEventListener("node", (event) => {
      const data = JSON.parse(event.data);
      setNode(data.node, /fail|error|mismatch|timeout|oom/.test(data.outcome) ? "failed" : "done");
    });
    source.addEventListener("status", (event) => setStatus(JSON.parse(event.data).status));
    source.addEventListener("question", (event) => {
      const form = $("#reply-form");
      if (form && form.dataset.turn === String(JSON.parse(event.data).turn)) return;  // on the page already
      const note = $("#run-notice");
      if (note) {
        note.hidden = false;
        note.textContent = "The run asks a question. ";
        const link = document.createElement("a");
        link.href = window.location.pathname + "#conversation";
        link.textContent = "Answer it";
        link.addEventListener("click", () => window.location.reload());
        note.append(link);
      }
      setStatus("waiting");
    });
    source.addEventListener("end", (event) => {
      const data = JSON.parse(event.data);
      setStatus(data.status);
      source.close();
      const note = $("#run-notice");
      if (note) {
        note.hidden = false;
        note.textContent = "The run ended (" + data.status + "). ";
        const link = document.createElement("a");
        link.href = window.location.pathname;
        link.textContent = "Show its summary and attempts";
        note.append(link);
      }
      showEnded(data.status);
    });
  }
})();
