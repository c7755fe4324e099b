"use strict";
// The analysis view: az's win chance per player and its three most visited moves for the
// position on screen (a live game or a replay), asked of the server, which searches only what this page
// may see (its seat's information, or public information without one). Off by default; the toggle is
// kept by this browser (localStorage). app.js calls analysis.render() after it shows a new position.
const analysis = (() => {
  const KEY = "splendor-analysis";
  const panel = { key: null, asking: false, answer: null };  // the position shown or asked; one request at a time
  const el = (id) => document.getElementById(id);

  function stored() { try { return localStorage.getItem(KEY) === "on"; } catch (e) { return false; } }
  function store(on) { try { localStorage.setItem(KEY, on ? "on" : "off"); } catch (e) { /* private mode: this page only */ } }
  function on() { return Boolean(el("analysis-toggle") && el("analysis-toggle").checked); }

  // What is on screen now: {key, path, names, over} or null (nothing to analyse).
  function target() {
    const a = window.app;
    if (!a) return null;
    if (a.mode === "game" && a.view) {
      const v = a.view;
      const tokens = typeof tokenList === "function" ? tokenList() : "";
      return { key: "game:" + v.game_id + ":" + v.move, names: v.agents, over: v.over,
        path: "/api/games/" + v.game_id + "/analysis?tokens=" + encodeURIComponent(tokens) };
    }
    if (a.mode === "replay" && a.replay) {
      const id = a.replay.replay_id;
      return { key: "replay:" + id + ":" + a.replayMove, names: a.replay.agents, over: false,
        path: "/api/replays/" + id + "/analysis?move=" + a.replayMove };
    }
    return null;
  }

  function body() {
    let b = el("analysis-body");
    if (!b) {
      b = document.createElement("div");
      b.id = "analysis-body";
      el("analysis").appendChild(b);
    }
    return b;
  }

  function note(key, text, state) {
    const b = body();
    b.replaceChildren();
    const p = document.createElement("div");
    p.className = "muted";
    p.textContent = text;
    b.appendChild(p);
    b.dataset.key = key || "";
    b.dataset.state = state;
  }

  function pct(x) { return (100 * x).toFixed(0) + "%"; }

  function show(key, t, r) {
    const b = body();
    b.replaceChildren();
    const bars = document.createElement("div");
    bars.className = "analysis-bars";
    r.win_chance.forEach((w, p) => {
      const row = document.createElement("div");
      row.className = "analysis-bar" + (p === r.seat_on_move ? " on-move" : "");
      row.dataset.seat = String(p);
      row.title = "az's value " + r.values[p].toFixed(3) + " as a win chance";
      const name = document.createElement("span");
      name.className = "analysis-name";
      name.textContent = "player_" + p + (t.names && t.names[p] ? " (" + t.names[p] + ")" : "");
      const track = document.createElement("span");
      track.className = "analysis-track";
      const fill = document.createElement("span");
      fill.className = "analysis-fill";
      fill.style.width = pct(w);
      track.appendChild(fill);
      const num = document.createElement("span");
      num.className = "analysis-pct";
      num.textContent = pct(w);
      row.append(name, track, num);
      bars.appendChild(row);
    });
    const list = document.createElement("ol");
    list.className = "analysis-moves";
    for (const m of r.moves) {
      const li = document.createElement("li");
      li.className = "analysis-move";
      li.dataset.action = String(m.id);
      li.title = "action id " + m.id + "; " + m.visits + " visits; player_" + r.seat_on_move + "'s win chance after it " + pct(m.win_chance);
      const share = document.createElement("span");
      share.className = "analysis-share";
      share.textContent = pct(m.share);
      li.append(share, document.createTextNode(" " + m.text));
      list.appendChild(li);
    }
    const foot = document.createElement("div");
    foot.className = "muted";
    foot.textContent = "az (" + r.network + "), " + r.sims + " simulations in " + Math.round(r.elapsed_ms) + " ms; " +
      (r.viewer === null ? "public information only" : "player_" + r.viewer + "'s information only") +
      "; move shares for player_" + r.seat_on_move;
    b.append(bars, list, foot);
    b.dataset.key = key;
    b.dataset.state = "ready";
  }

  async function ask(t) {
    panel.asking = true;
    panel.key = t.key;
    note(t.key, "az is thinking about this position...", "loading");
    let res, data;
    try {
      res = await fetch(t.path);
      data = await res.json();
    } catch (e) {
      res = null;
      data = { error: "no answer from the server: " + e.message };
    }
    panel.asking = false;
    const now = target();
    if (!on() || !now || now.key !== t.key) { render(); return; }  // the page moved on: ask about the new position
    if (res && res.ok) { show(t.key, t, data); return; }
    if (res && res.status === 503) { setTimeout(() => { if (panel.key === t.key) { panel.key = null; render(); } }, 500); }
    note(t.key, (data && data.error) || "HTTP " + (res ? res.status : "?"), "error");
  }

  // Show the analysis of the position on screen (asked once per position), or nothing when off.
  function render() {
    const box = el("analysis");
    if (!box) return;
    const b = body();
    b.classList.toggle("hidden", !on());
    if (!on()) { panel.key = null; b.dataset.state = "off"; return; }
    const t = target();
    if (!t) { panel.key = null; note("", "open a game or a record to see az's view of it", "idle"); return; }
    if (t.over) { panel.key = t.key; note(t.key, "the game is over", "over"); return; }
    if (panel.asking || t.key === panel.key) return;  // one request at a time; the newest position is asked next
    ask(t);
  }

  function init() {
    const toggle = el("analysis-toggle");
    if (!toggle) return;
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = "/web/analysis.css";
    document.head.appendChild(link);
    toggle.checked = stored();
    toggle.addEventListener("change", () => { store(toggle.checked); render(); });
    render();
  }

  init();
  return { render };
})();
window.analysis = analysis;
