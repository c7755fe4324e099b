"use strict";
// The page holds no rules: every board, legal move and result comes from the server.
const app = {
  mode: null,        // "game" or "replay"
  view: null,        // the last game view from the server
  replay: null,      // the open record: {replay_id, moves, ...}
  replayMove: 0,
  replayWanted: 0,  // the move asked for last (the steps count from it)
  choosing: null,    // the piece whose choices are open: {game, move, id} (kept across a redraw)
  busy: false,       // a move of this page is on its way to the server
  sends: 0,          // moves sent so far (the newest one owns app.busy)
  sentAt: -1,        // the move number the newest one was sent at
  timings: [],       // ms from a move click to the updated board (read by python -m training.speed.app)
  tokens: {},        // this browser's seat tokens for the open game: {seat: token}
  stream: null,      // the open game's live updates (server-sent events)
  retryTimer: null,  // the next try to reach the server again after the stream was lost
  reconnects: 0,     // times this page got its game back after losing the server (read by the tests)
  thinkingTimer: null,
};
window.app = app;
const $ = (id) => document.getElementById(id);

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res, data;
  try {
    res = await fetch(path, opts);
    data = await res.json();
  } catch (e) {
    throw new Error("no answer from the server: " + e.message);
  }
  if (!res.ok) {
    const err = new Error(data && data.error ? data.error : "HTTP " + res.status);
    err.status = res.status;
    throw err;
  }
  return data;
}

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

function showError(message) { $("error").textContent = message || ""; }

function showTable(view, move) {
  // One renderer for every board on the page, a live game's and a replay's (table.js).
  $("board").replaceChildren(buildTable(view));
  $("board").dataset.move = String(move);
}

// ---- a game is a URL: /games/ID, its seat tokens kept in this browser ---------
function tokenKey(id) { return "splendor-tokens-" + id; }
function loadTokens(id) {
  try { return JSON.parse(localStorage.getItem(tokenKey(id)) || "{}"); } catch (e) { return {}; }
}
function saveTokens(id, tokens) {
  app.tokens = Object.assign(loadTokens(id), tokens || {});
  try { localStorage.setItem(tokenKey(id), JSON.stringify(app.tokens)); } catch (e) { /* private mode: this tab only */ }
}
function tokenList() { return Object.values(app.tokens).join(","); }

function follow(id) {
  // The live stream: every change of the game (an agent starting to think, its move) arrives here.
  if (app.stream) app.stream.close();
  clearTimeout(app.retryTimer);
  const stream = new EventSource("/api/games/" + id + "/events?tokens=" + encodeURIComponent(tokenList()));
  app.stream = stream;
  stream.onmessage = (event) => {
    const view = JSON.parse(event.data);
    if (app.mode === "game" && app.view && app.view.game_id === view.game_id && view.version > app.view.version) {
      renderGame(view);
    }
  };
  stream.onerror = () => {  // the server went away (a restart): say so, and try again until it is back
    if (app.stream !== stream) return;
    stream.close();
    app.stream = null;
    reconnect(id);
  };
}

function reconnect(id) {
  // Try again with backoff (0.25 s doubling to 2 s); once the server answers, reload the game and follow it
  // anew (a restarted server counts versions afresh). A refusal (the game is gone) ends the tries.
  const banner = $("reconnecting");
  let delay = 250, tries = 0;
  const attempt = async () => {
    if (app.mode !== "game" || !app.view || app.view.game_id !== id) { banner.classList.add("hidden"); return; }
    tries += 1;
    try {
      const view = await api("GET", "/api/games/" + id + "?tokens=" + encodeURIComponent(tokenList()));
      banner.classList.add("hidden");
      app.reconnects += 1;
      app.busy = false;
      showError("");
      renderGame(view);
      follow(id);
    } catch (e) {
      if (e.status === 404 || e.status === 409) { banner.classList.add("hidden"); showError(e.message); return; }
      delay = Math.min(2 * delay, 2000);
      banner.textContent = "Lost the server: reconnecting... (try " + tries + ")";
      app.retryTimer = setTimeout(attempt, delay);
    }
  };
  banner.textContent = "Lost the server: reconnecting...";
  banner.classList.remove("hidden");
  clearTimeout(app.retryTimer);
  app.retryTimer = setTimeout(attempt, delay);
}

async function openGame(view) {
  const delay = Number($("speed").value);  // the speed chosen before the game started
  saveTokens(view.game_id, view.tokens);
  const path = "/games/" + view.game_id;
  if (location.pathname !== path) history.pushState({}, "", path);
  $("setup").open = false;
  showSeatLinks(view);
  renderGame(view);
  // Watch mode: the server plays the agents at the pace asked here, while this page listens.
  if (view.pace) await setPace({ delay_ms: delay, paused: false });
  follow(view.game_id);
}

async function setPace(pace) {
  // The pace of a game only agents play (every page watching it sees the same); the moves come on the stream.
  const v = app.view;
  if (!v || !v.pace || app.mode !== "game") return;
  try {
    const next = await api("POST", "/api/games/" + v.game_id + "/pace", pace);
    if (app.view && app.view.game_id === next.game_id && next.version > app.view.version) renderGame(next);
    showError("");
  } catch (e) { showError(e.message); }
}

function showSeatLinks(view) {
  const box = $("seat-links");
  box.replaceChildren();
  if (!view.tokens || view.human_seats.length < 2) return;
  box.appendChild(document.createTextNode("Seat links (one browser each; this screen holds them all): "));
  for (const [seat, token] of Object.entries(view.tokens)) {
    const a = document.createElement("a");
    a.href = location.origin + "/games/" + view.game_id + "?seat=" + seat + "&token=" + token;
    a.textContent = "player_" + seat;
    a.className = "seat-link";
    box.appendChild(a);
  }
}

async function resumeFromUrl() {
  const m = location.pathname.match(/^\/games\/([0-9a-f]+)$/);
  if (!m) return;
  const query = new URLSearchParams(location.search);
  if (query.get("seat") !== null && query.get("token")) {
    saveTokens(m[1], { [query.get("seat")]: query.get("token") });
    history.replaceState({}, "", "/games/" + m[1]);  // the secret leaves the address bar
  } else {
    app.tokens = loadTokens(m[1]);
  }
  try {
    const view = await api("GET", "/api/games/" + m[1] + "?tokens=" + encodeURIComponent(tokenList()));
    $("setup").open = false;
    renderGame(view);
    follow(view.game_id);
  } catch (e) { showError(e.message); }
}

function thinkingText(view, since) {
  const t = view.thinking;
  const seconds = ((t.elapsed_ms + performance.now() - since) / 1000).toFixed(1);
  const most = t.clock_ms ? " (at most " + (t.clock_ms / 1000).toFixed(1) + " s)" : "";
  return "Move " + view.move + ": " + t.agent + " (player_" + t.seat + ") is thinking... " + seconds + " s" + most;
}

function renderGame(view) {
  const previous = app.mode === "game" ? app.view : null;
  app.mode = "game";
  app.view = view;
  // The live stream can show the game past a move this page sent before that request answers:
  // the server took the move, so the board is live again (a click now is not dropped).
  if (app.busy && view.move > app.sentAt) app.busy = false;
  clearInterval(app.thinkingTimer);
  const seen = previous && previous.game_id === view.game_id ? previous.move : view.move;
  showTable(view, view.move);
  $("watch-only").classList.toggle("hidden", view.human_seats.length > 0);
  armTable(view);
  fitTable();
  markLastMoves(view, seen, !previous || previous.game_id !== view.game_id);
  const moves = $("moves");
  moves.replaceChildren();
  for (const m of view.legal) {
    const b = document.createElement("button");
    b.textContent = m.text;
    b.dataset.action = String(m.id);
    b.title = "action id " + m.id;
    b.addEventListener("click", () => sendMove(m.id));
    b.disabled = app.busy;
    moves.appendChild(b);
  }
  let status;
  if (view.over) {
    const r = view.result;
    const who = r.winners.length ? r.winners.map((w) => "player_" + w + " (" + view.agents[w] + ")").join(", ") : "nobody";
    status = (r.truncated ? "Stopped at the turn cap. " : "Game over. ") + "Winner: " + who +
      "; prestige " + r.prestige.join(" / ") + "; " + plural(r.turns, "turn") + " (" + plural(view.move, "move") + ").";
  } else if (view.thinking) {
    const since = performance.now();
    status = thinkingText(view, since);
    app.thinkingTimer = setInterval(() => { $("status").textContent = thinkingText(view, since); }, 100);
  } else if (view.my_seats.includes(view.seat_on_move)) {
    status = "Move " + view.move + ": your move (player_" + view.seat_on_move + ")";  // what to do: on the table's bar
  } else {
    const human = view.human_seats.includes(view.seat_on_move);
    status = "Move " + view.move + ": player_" + view.seat_on_move + " (" + view.agents[view.seat_on_move] + ") to move" +
      (human ? " (a person, at another browser)" : view.pace ? (view.pace.paused ? " (paused)" : " (watching)") : "");
  }
  $("status").textContent = status;
  $("status").dataset.thinking = String(Boolean(view.thinking));
  $("status").dataset.over = String(view.over);
  $("log").textContent = view.log.join("\n");
  $("log").scrollTop = $("log").scrollHeight;
  const dl = $("download");
  if (view.over && view.record) {
    dl.href = URL.createObjectURL(new Blob([JSON.stringify(view.record) + "\n"], { type: "application/json" }));
    dl.classList.remove("hidden");
    $("replay-this").classList.remove("hidden");
  } else {
    dl.classList.add("hidden");
    $("replay-this").classList.add("hidden");
  }
  if (view.pace) {  // the game's pace, as set from any page watching it
    if (document.activeElement !== $("speed")) $("speed").value = String(view.pace.delay_ms);
    $("speed-value").textContent = $("speed").value;
    $("pause").textContent = view.pace.paused ? "Resume" : "Pause";
  }
  if (window.analysis) window.analysis.render();
}

async function reload() {
  if (!app.view) return;
  try {
    renderGame(await api("GET", "/api/games/" + app.view.game_id + "?tokens=" + encodeURIComponent(tokenList())));
  } catch (e) { showError(e.message); }
}

async function sendMove(action) {
  const v = app.view;
  if (app.busy || !v) return;
  app.busy = true;
  const sent = ++app.sends;
  app.sentAt = v.move;
  showError("");                   // a new move: the last refusal no longer applies
  document.querySelectorAll("#moves button").forEach((b) => { b.disabled = true; });
  const t0 = performance.now();
  try {
    const next = await api("POST", "/api/games/" + v.game_id + "/move",
      { action: action, move: v.move, tokens: Object.values(app.tokens) });
    if (app.view && next.game_id === app.view.game_id && next.version >= app.view.version) renderGame(next);
    // Stop the clock once the new board has been laid out and the frame that shows it is due.
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    const ms = performance.now() - t0;
    app.timings.push(ms);
    $("timing").textContent = "last move: " + ms.toFixed(0) + " ms from click to board";
  } catch (e) {
    if (sent !== app.sends) return;  // a later move is under way: this answer is old news
    showError(e.message);          // the game is unchanged on the server: the board stays as it was
    if (e.status === 409) await reload();
  } finally {
    if (sent === app.sends) {      // a later move owns app.busy otherwise
      app.busy = false;
      if (app.view) document.querySelectorAll("#moves button").forEach((b) => { b.disabled = false; });
    }
  }
}

function seatSpecs() {
  return Array.from(document.querySelectorAll(".seat")).map((i) => i.value.trim()).filter((s) => s !== "");
}

function chosenModules() {
  return Array.from(document.querySelectorAll(".module:checked")).map((i) => i.value);
}

async function startGame() {
  const seed = $("seed").value.trim();
  try {
    const view = await api("POST", "/api/games", {
      agents: seatSpecs(), modules: chosenModules(), seed: seed === "" ? null : Number(seed),
    });
    showError("");
    app.timings = [];
    await openGame(view);
  } catch (e) { showError(e.message); }
}

// ---- records ---------------------------------------------------------------
function readFile(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(new Error("cannot read " + file.name));
    r.readAsText(file);
  });
}

async function openRecord(body) {
  if (app.stream) { app.stream.close(); app.stream = null; }
  clearTimeout(app.retryTimer);
  $("reconnecting").classList.add("hidden");
  $("setup").open = true;
  if (location.pathname !== "/") history.pushState({}, "", "/");
  try {
    const info = await api("POST", "/api/records", body);
    showError("");
    app.replay = info;
    app.mode = "replay";
    // The seats and modules of the form become the record's, so that "continue" starts the same game.
    const known = new Set(Array.from($("spec-list").options).map((o) => o.value));
    document.querySelectorAll(".seat").forEach((input, p) => {
      const spec = info.agents && info.agents[p];
      input.value = p < info.num_players ? (spec && known.has(spec.split(":")[0]) ? spec : "greedy") : "";
    });
    document.querySelectorAll(".module").forEach((box) => { box.checked = info.modules.includes(box.value); });
    $("replay-panel").classList.remove("hidden");
    $("replay-slider").max = String(info.moves.length);
    $("replay-info").textContent = "record " + info.index + " of " + info.records + ": " + info.num_players +
      " players" + (info.modules.length ? ", " + info.modules.join("+") : "") + ", seed " + info.seed +
      (info.agents ? ", " + info.agents.join(" vs ") : "");
    $("moves").replaceChildren();
    $("log").textContent = info.moves.join("\n");
    showReplay(info);
  } catch (e) { showError(e.message); }
}

function showReplay(pos) {
  app.replayMove = app.replayWanted = pos.move;
  const view = { board: pos.board, shown_seat: null, legal: [], names: pos.names, last: pos.last };
  showTable(view, pos.move);
  fitTable();
  markLastMoves(view, pos.move - 1, true);  // the move just stepped to, lit
  $("replay-slider").value = String(pos.move);
  $("replay-move").textContent = pos.move + " / " + app.replay.moves.length;
  $("status").textContent = "Replay, move " + pos.move + ": " + pos.caption;
  $("status").dataset.over = String(pos.over);
  $("continue").disabled = pos.over;
  if (window.analysis) window.analysis.render();
}

async function replayTo(move) {
  if (!app.replay) return;
  move = Math.max(0, Math.min(app.replay.moves.length, move));
  app.replayWanted = move;  // quick clicks count from here, not from the position still on screen
  try {
    const pos = await api("GET", "/api/replays/" + app.replay.replay_id + "?move=" + move);
    if (app.mode === "replay" && move === app.replayWanted) { showError(""); showReplay(pos); }
  } catch (e) { showError(e.message); }
}

async function continueFromReplay() {
  try {
    const view = await api("POST", "/api/replays/" + app.replay.replay_id + "/continue",
      { move: app.replayMove, agents: seatSpecs() });
    showError("");
    $("replay-panel").classList.add("hidden");
    await openGame(view);
  } catch (e) { showError(e.message); }
}

// ---- wiring ----------------------------------------------------------------
async function init() {
  try {
    const specs = await api("GET", "/api/specs");
    const list = $("spec-list");
    for (const name of [specs.human, ...Object.keys(specs.specs)]) {
      const o = document.createElement("option");
      o.value = name;
      o.label = name === specs.human ? "you, at this page" : specs.specs[name];
      list.appendChild(o);
    }
    for (const m of specs.modules) {
      const l = document.createElement("label");
      l.innerHTML = '<input type="checkbox" class="module"> ';
      l.firstChild.value = m;
      l.firstChild.id = "module-" + m;
      l.appendChild(document.createTextNode(m));
      $("module-boxes").appendChild(l);
    }
    for (const name of specs.records) {
      const o = document.createElement("option");
      o.value = name;
      $("record-list").appendChild(o);
    }
  } catch (e) { showError(e.message); }
  $("start").addEventListener("click", startGame);
  $("speed").addEventListener("input", () => { $("speed-value").textContent = $("speed").value; });
  $("speed").addEventListener("change", () => setPace({ delay_ms: Number($("speed").value) }));
  $("pause").addEventListener("click", () => {
    if (app.view && app.view.pace) setPace({ paused: !app.view.pace.paused });
  });
  $("send-id").addEventListener("click", () => {
    const raw = $("action-id").value.trim();
    if (raw === "" || !Number.isInteger(Number(raw))) { showError("type an action id (an integer)"); return; }
    sendMove(Number(raw));
  });
  $("open-record").addEventListener("click", async () => {
    const index = Number($("record-index").value || 0);
    const file = $("record-file").files[0];
    const path = $("record-path").value.trim();
    if (file) {
      try { await openRecord({ text: await readFile(file), index }); } catch (e) { showError(e.message); }
    } else if (path) {
      await openRecord({ path, index });
    } else {
      showError("choose a records file (JSON lines) or name one in the server's records folder");
    }
  });
  $("replay-this").addEventListener("click", () => { if (app.view && app.view.record) openRecord({ record: app.view.record }); });
  $("replay-first").addEventListener("click", () => replayTo(0));
  $("replay-prev").addEventListener("click", () => replayTo(app.replayWanted - 1));
  $("replay-next").addEventListener("click", () => replayTo(app.replayWanted + 1));
  $("replay-last").addEventListener("click", () => replayTo(app.replay ? app.replay.moves.length : 0));
  $("replay-slider").addEventListener("change", () => replayTo(Number($("replay-slider").value)));
  $("continue").addEventListener("click", continueFromReplay);
  window.addEventListener("popstate", () => location.reload());
  await resumeFromUrl();
  document.body.dataset.ready = "true";
}
init();
