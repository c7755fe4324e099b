"use strict";
// The table: the board built as HTML from the server's JSON view (training/app/board.py);
// every acting piece carries the action ids it plays (data-action). Loaded before app.js.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
const GEMS = ["white", "blue", "green", "red", "black"];
// A piece clicked opens its choices first (nothing is played at once) when it is one of these:
// a card (market, reserved, drawn, your own) or a deck.
const CARD_TARGET = /^(slot|reserved|deck|odeck|drawn|card)-/;
// How long a player's last move stays lit on the board (ms).
const FLASH_MS = 2500;

function pips(counts, names) {
  const r = el("span", "pips");
  counts.forEach((n, i) => { if (n) r.appendChild(el("span", "pip " + names[i], String(n))); });
  return r;
}

function cardWords(card) {
  if (!card) return "a hidden card";
  const cost = card.sacrifice ? "paid by sacrificing " + sacrificeWords(card.sacrifice) + ", not with tokens" :
    "cost " + (card.cost.map((n, i) => n ? n + " " + GEMS[i] : "").filter(Boolean).join(", ") || "nothing");
  return (card.orient ? "Orient " : "") + "L" + card.level + " " + (card.colour || "colourless") + " card, " +
    card.points + " pts" + (card.effect_text ? ", " + card.effect_text : "") + ", " + cost;
}

// An Orient sacrifice card is paid with purchased cards, not tokens (the server's card.sacrifice says which).
function sacrificeWords(sac) { return sac.count + " of your " + sac.colour + " cards"; }
function sacrificeEl(sac) {  // the cost area's "-2" on a card of that colour, shaped like the players' card bonuses
  const r = el("span", "pips");
  const p = el("span", "pip sac " + sac.colour, "\u2212" + sac.count);
  p.title = "sacrifice " + sacrificeWords(sac);
  r.appendChild(p);
  return r;
}

function sacrificeNote(card, moves, me) {
  // The choices menu of a sacrifice card: the cards buying it takes, or why it cannot be bought now
  // (the cards the seat holds per colour as the engine counts them for a sacrifice: me.cards_held).
  const sac = card.sacrifice;
  const held = me && me.cards_held ? me.cards_held[sac.colour] : null;
  if (!moves.some((m) => m.verb.startsWith("buy"))) {
    return "You cannot buy it now: it takes " + sac.count + " " + sac.colour + " cards" +
      (held === null ? "" : " and you hold " + held);
  }
  if (held === null) return "Buying it sacrifices " + sacrificeWords(sac);
  if (held <= sac.count) return "Buying it sacrifices your " + held + " " + sac.colour + " cards";
  return "Buying it sacrifices " + sac.count + " of your " + held + " " + sac.colour + " cards: you choose which";
}

function cardEl(card, id) {
  const c = el("div", "piece card");
  c.id = id;
  if (!card) { c.appendChild(el("div", "eff", id.startsWith("slot") ? "(empty)" : "hidden")); return c; }
  if (card.orient) c.classList.add("orient-card");
  const band = el("div", "band " + (card.colour || "none"));
  band.appendChild(el("span", "", card.points ? String(card.points) : ""));
  band.appendChild(el("span", "", (card.orient ? "O" : "L") + card.level));
  c.appendChild(band);
  if (card.orient) {  // "Orient", then its effect on a line of its own (app.css sizes it to the card)
    const eff = el("div", "eff");
    eff.appendChild(el("span", "orient-word", "Orient"));
    if (card.effect_text) eff.appendChild(el("span", "effect", card.effect_text));
    c.appendChild(eff);
  }
  const cost = card.sacrifice ? sacrificeEl(card.sacrifice) : pips(card.cost, GEMS);
  cost.className = "cost";
  c.appendChild(cost);
  c.title = cardWords(card);
  c.face = card;  // the choices menu reads it (a sacrifice card's words)
  return c;
}

function tower(colour, title) {  // a stronghold, in its owner's colour
  const t = el("span", "tower");
  t.style.background = colour;
  t.title = title;
  return t;
}

function buildTable(view) {
  const b = view.board;
  const seat = view.shown_seat;
  const colours = b.seat_colours || [];
  const t = el("div");
  t.id = "table";
  if (b.orient_decks.length) t.classList.add("orient");
  t.dataset.columns = String(b.orient_decks.length ? 7.4 : 4.7);  // card widths in a market row
  if (tableCard) t.style.setProperty("--card", tableCard);
  const decision = el("div");
  decision.id = "decision";
  t.appendChild(decision);
  // nobles, cities, trading posts
  const top = el("div", "row tiles");
  const tile = (id, title, req, owner) => {  // a noble or a city: what it asks for, who holds it
    const x = el("div", "piece tile");
    x.id = id;
    x.appendChild(el("b", "", title));
    x.appendChild(pips(req, GEMS));
    if (owner !== null) {
      const o = el("span", "owner", view.names ? view.names[owner] : "player_" + owner);
      o.style.borderColor = colours[owner] || "";
      x.appendChild(o);
    }
    top.appendChild(x);
  };
  b.nobles.forEach((n, i) => tile("noble-" + i, "noble " + n.points, n.req, n.owner));
  b.cities.forEach((c, i) =>
    tile("city-" + i, "city " + c.prestige + (c.same ? " +" + c.same + " same" : ""), c.req, c.owner));
  b.trading_posts.forEach((p, i) => {
    const x = el("div", "piece tile");
    x.id = "post-" + i;
    x.appendChild(el("b", "", p.name.replace(/_/g, " ")));
    x.appendChild(pips(p.req, GEMS));
    b.players.forEach((q, s) => { if (q.trading_posts.includes(p.name)) x.appendChild(tower(colours[s], "player_" + s + "'s post")); });
    top.appendChild(x);
  });
  t.appendChild(top);
  // market: level 3 on top, each row its deck, four cards, then the Orient deck and its two cards
  const market = el("div", "market");
  for (let level = 2; level >= 0; level--) {
    const row = el("div", "row");
    const deck = el("div", "piece deck lv" + level, "L" + (level + 1));
    deck.id = "deck-" + level;
    deck.title = "level " + (level + 1) + " deck";
    deck.appendChild(el("span", "", b.decks[level] + " left"));
    row.appendChild(deck);
    for (let k = 0; k < 4; k++) row.appendChild(slotEl(b.slots[level * 4 + k], colours));
    if (b.orient_decks.length) {
      const od = el("div", "piece deck orient", "O" + (level + 1));
      od.id = "odeck-" + level;
      od.title = "Orient level " + (level + 1) + " deck";
      od.appendChild(el("span", "", b.orient_decks[level] + " left"));
      row.appendChild(od);
      for (let k = 0; k < 2; k++) row.appendChild(slotEl(b.slots[12 + level * 2 + k], colours));
    }
    market.appendChild(row);
  }
  t.appendChild(market);
  // the bank
  const bank = el("div", "bank");
  for (const c of b.colours) {
    const g = el("div", "piece gem " + c, String(b.bank[c]));
    g.id = "bank-" + c;
    g.title = b.bank[c] + " " + c + " in the bank";
    bank.appendChild(g);
  }
  b.drawn.forEach((card, k) => bank.appendChild(cardEl(card, "drawn-" + k)));
  t.appendChild(bank);
  // the players
  const players = el("div", "players");
  b.players.forEach((p, s) => {
    const x = el("div", "piece player" + (s === b.current ? " on-move" : ""));
    x.id = "player-" + s;
    x.style.setProperty("--seat", colours[s] || "#888");
    const held = GEMS.concat(["gold"]).reduce((n, c) => n + (p.tokens[c] || 0), 0);
    const head = el("div", "head");
    head.appendChild(el("b", "", (view.names ? view.names[s] : "player_" + s) + ": " + p.prestige + " pts" +
      (p.nobles ? ", " + p.nobles + " noble" + (p.nobles > 1 ? "s" : "") : "")));
    const count = el("span", "held" + (held > 10 ? " over" : ""), held + "/10");
    count.id = "held-" + s;
    count.title = held + " tokens held (10 at most)";
    head.appendChild(count);
    x.appendChild(head);
    const toks = el("div", "mine");
    for (const c of b.colours) {
      const tok = el("span", "piece mini " + c, String(p.tokens[c]));
      tok.title = p.tokens[c] + " " + c + " held";
      if (s === seat) tok.id = "token-" + c;
      toks.appendChild(tok);
    }
    const bonus = GEMS.filter((c) => p.bonuses[c]);
    if (bonus.length) toks.appendChild(el("span", "muted", "cards"));
    for (const c of bonus) toks.appendChild(el("span", "mini card-bonus " + c, "+" + p.bonuses[c]));
    x.appendChild(toks);
    const res = el("div", "mine");
    p.reserved.forEach((r, i) => {
      const card = cardEl(r.card, s === seat ? "reserved-" + i : "p" + s + "-reserved-" + i);
      card.classList.add("small");
      res.appendChild(card);
    });
    if (p.reserved.length) x.appendChild(res);
    // your cards one by one only when one is to be chosen (an Orient pairing or sacrifice): else the bonuses say it
    if (Array.isArray(p.purchased) && view.legal.some((m) => m.target.startsWith("card-"))) {
      const owned = el("div", "mine");
      for (const card of p.purchased) {
        const m = el("span", "piece mini " + (card.colour || "none"), String(card.points || ""));
        m.id = "card-" + card.id;
        m.title = "your " + cardWords(card);
        owned.appendChild(m);
      }
      x.appendChild(owned);
    }
    if (p.trading_posts.length || p.stronghold_supply) {
      const extra = el("div", "mine muted");
      for (let k = 0; k < p.stronghold_supply; k++) extra.appendChild(tower(colours[s], "a stronghold in hand"));
      if (p.stronghold_supply) extra.appendChild(el("span", "", "in hand "));
      if (p.trading_posts.length) extra.appendChild(el("span", "", p.trading_posts.map((n) => n.replace(/_/g, " ")).join(", ")));
      x.appendChild(extra);
    }
    const last = view.last && view.last[s];
    if (last && s !== seat) {
      const said = el("div", "last", "last: " + last.words.join(", then "));
      said.id = "last-" + s;
      x.appendChild(said);
    }
    players.appendChild(x);
  });
  t.appendChild(players);
  const menu = el("div");
  menu.id = "menu";
  menu.setAttribute("role", "dialog");
  t.appendChild(menu);
  return t;
}

function slotEl(slot, colours) {
  const c = cardEl(slot.card, "slot-" + slot.slot);
  if (slot.orient && !slot.card) c.classList.add("orient-card");
  const forts = el("span", "forts");
  for (const sh of slot.strongholds || []) {
    for (let k = 0; k < sh.count; k++) forts.appendChild(tower(colours[sh.seat], "player_" + sh.seat + "'s stronghold"));
  }
  if (forts.childElementCount) {
    forts.title = (slot.strongholds || []).map((sh) => "player_" + sh.seat + ": " + sh.count + " stronghold" +
      (sh.count > 1 ? "s" : "")).join("; ");
    c.appendChild(forts);
  }
  return c;
}

// ---- what happened: the other players' last moves, lit for a moment ----------
const lit = {};  // board element id -> {until: performance.now() deadline, colour}
function markLastMoves(view, seen, fresh) {
  // Light the pieces of every other seat's turn newer than move `seen` (the last move this page showed);
  // `fresh`: another position altogether (a replay step, another game), so nothing lit before stays lit.
  const now = performance.now();
  if (fresh) for (const id of Object.keys(lit)) delete lit[id];
  (view.last || []).forEach((turn, s) => {
    if (!turn || s === view.shown_seat || turn.move <= seen) return;
    for (const id of turn.marks) lit[id] = { until: now + FLASH_MS, colour: view.board.seat_colours[s] };
  });
  for (const [id, mark] of Object.entries(lit)) {
    if (mark.until <= now) { delete lit[id]; continue; }
    const e = document.getElementById(id);
    if (!e || !e.closest("#table")) continue;
    e.classList.add("just-moved");
    e.style.setProperty("--flash", mark.colour);
    e.style.setProperty("--since", -(FLASH_MS - (mark.until - now)) + "ms");  // a rebuilt board goes on, not afresh
  }
}

// ---- the table's size: big cards, the whole table in the window when it is wide ---
let tableCard = null;  // the card width last fitted: a new table starts at it, so one layout usually suffices
function setStyle(e, name, value) { if (e.style.getPropertyValue(name) !== value) e.style.setProperty(name, value); }
function fitTable() {
  const t = document.getElementById("table");
  if (!t) return;
  const gap = 6, wide = window.innerWidth >= 900;
  const units = Number(t.dataset.columns), gaps = units > 5 ? 7 : 4;
  const width = t.clientWidth;
  // wide: market | bank (a gem column) | players (at least 240 px)
  let card = wide ? (width - 240 - 64 - 3 * gap - gaps * gap) / units : (width - gaps * gap) / units;
  card = Math.max(40, Math.min(card, 150));
  if (wide) {  // three rows of cards under the bar and the tiles, above the window's bottom edge
    const room = window.innerHeight - t.querySelector(".market").getBoundingClientRect().top - 10;
    card = Math.max(40, Math.min(card, (room - 2 * gap) / 3 / 1.25));
  }
  tableCard = card.toFixed(1) + "px";
  setStyle(t, "--card", tableCard);
  const players = t.querySelector(".players");
  const most = wide ? Math.max(200, window.innerHeight - players.getBoundingClientRect().top - 10) + "px" : "";
  if (players.style.maxHeight !== most) players.style.maxHeight = most;
}
window.addEventListener("resize", fitTable);

// ---- acting on the table -------------------------------------------------------
function armTable(view) {
  // Give every acting piece its action ids and what a click on it does.
  app.pick = [];
  const byTarget = {};
  for (const m of view.legal) (byTarget[m.target] = byTarget[m.target] || []).push(m);
  const takes = byTarget.bank || [];
  const me = view.shown_seat === null ? null : view.board.players[view.shown_seat];
  const t = $("table");
  t.addEventListener("click", (e) => { if (!e.target.closest("#menu")) showError(""); }, true);  // an old refusal goes
  const arm = (e, act) => {
    e.classList.add("legal");
    e.tabIndex = 0;
    e.setAttribute("role", "button");
    e.addEventListener("click", act);
    e.addEventListener("keydown", (k) => { if (k.key === "Enter" || k.key === " ") { k.preventDefault(); act(); } });
  };
  for (const [target, moves] of Object.entries(byTarget)) {
    if (target === "bank" || target === "decision") continue;
    const e = $(target);
    if (!e) continue;
    e.dataset.action = moves.map((m) => m.id).join(" ");
    arm(e, () => choose(moves, e));
  }
  if (takes.length) {
    for (const c of view.board.colours) {
      const e = $("bank-" + c);
      const mine = takes.filter((m) => m.gems.includes(c));
      if (!e || e.dataset.action) continue;
      if (mine.length) {
        e.dataset.action = mine.map((m) => m.id).join(" ");
        arm(e, () => pickGem(c, takes));
      } else {  // not takeable now: a click says why rather than nothing
        e.addEventListener("click", () => pickGem(c, takes));
      }
    }
  }
  // a market card you could buy but cannot afford now: visibly not
  if (me) {
    document.querySelectorAll("#table .card[id^=slot-]").forEach((e) => {
      const moves = byTarget[e.id] || [];
      if (!moves.some((m) => m.verb.startsWith("buy")) && e.querySelector(".band")) e.classList.add("unaffordable");
    });
  }
  const decision = $("decision");
  if (view.legal.length) decision.appendChild(el("span", "phase", view.board.phase_text));
  if (takes.length) {
    const confirm = el("button", "", "Take");
    confirm.id = "confirm";
    confirm.disabled = true;
    confirm.addEventListener("click", () => { if (confirm.dataset.action) sendMove(Number(confirm.dataset.action)); });
    const clear = el("button", "", "Clear");
    clear.id = "clear";
    clear.addEventListener("click", () => { app.pick = []; showPick(takes); hint(""); });
    decision.append(confirm, clear);
  }
  for (const m of byTarget.decision || []) {
    const btn = el("button", "", m.text);
    btn.dataset.action = String(m.id);
    btn.addEventListener("click", () => sendMove(m.id));
    decision.appendChild(btn);
  }
  const note = el("span", "hint");
  note.id = "hint";
  note.setAttribute("role", "status");
  decision.appendChild(note);
  // A choice the player opened stays open when the same position is drawn again (a watcher's stream,
  // the end of an agent's turn): the redraw must not take the menu from under the pointer.
  const open = app.choosing;
  if (open && open.game === view.game_id && open.move === view.move && byTarget[open.id] && $(open.id)) {
    choose(byTarget[open.id], $(open.id));
  } else {
    app.choosing = null;
  }
}

function hint(text) { const h = $("hint"); if (h) h.textContent = text; }

function sameGems(a, b) { return a.length === b.length && a.slice().sort().join() === b.slice().sort().join(); }
function within(pick, gems) {
  const left = gems.slice();
  for (const g of pick) { const i = left.indexOf(g); if (i < 0) return false; left.splice(i, 1); }
  return true;
}

function whyNot(colour, pick, takes) {
  // Why adding `colour` to the pick is no legal take, in words (the legal takes decide; this only explains).
  const bank = app.view.board.bank;
  if (colour === "gold") return "gold is not taken: you get one when you reserve a card";
  if (!bank[colour]) return "the " + colour + " stack is empty";
  if (pick.length >= 3) return "a take is at most 3 gems: Take them, or Clear";
  if (pick.length === 2 && pick[0] === pick[1]) return "two of one colour is a whole take: Take them, or Clear";
  if (pick.includes(colour)) {
    if (pick.length > 1) return "two of one colour is a take of its own, with no other colour";
    return "two " + colour + " need a stack of 4 or more (" + bank[colour] + " left)";
  }
  if (takes.every((m) => m.gems.length < pick.length + 1)) return "no take of " + (pick.length + 1) + " gems is open now";
  return "no legal take holds " + pick.concat([colour]).join(", ");
}

function pickGem(colour, takes) {
  const next = app.pick.concat([colour]);
  if (!takes.some((m) => within(next, m.gems))) { hint("Not that: " + whyNot(colour, app.pick, takes)); return; }
  hint("");
  app.pick = next;
  showPick(takes);
}

function showPick(takes) {
  const exact = takes.find((m) => sameGems(m.gems, app.pick));
  const confirm = $("confirm");
  confirm.textContent = app.pick.length ? "Take " + app.pick.join(", ") : "Take";
  confirm.disabled = !exact;
  if (exact) confirm.dataset.action = String(exact.id); else delete confirm.dataset.action;
  for (const c of GEMS) {
    const e = $("bank-" + c);
    if (e) e.classList.toggle("picked", app.pick.includes(c));
  }
}

function moveLabel(m, card) {
  // A menu entry: the verb, and for a purchase exactly what it pays (a sacrifice card: the cards it takes).
  const b = el("button", "");
  b.dataset.action = String(m.id);
  b.title = m.text;
  let label = m.verb.charAt(0).toUpperCase() + m.verb.slice(1);
  if (m.to) label += " to " + m.to.replace("slot-", "slot ");
  b.appendChild(el("span", "", label));
  if (m.spends && card && card.sacrifice) {
    b.appendChild(el("span", "", ": sacrifice"));
    b.appendChild(sacrificeEl(card.sacrifice));
  } else if (m.spends) {
    const paid = Object.entries(m.spends);
    b.appendChild(el("span", "", paid.length ? ": pay" : ": free"));
    if (paid.length) {
      const p = el("span", "pips");
      for (const [c, n] of paid) { const x = el("span", "pip " + c, String(n)); x.title = n + " " + c; p.appendChild(x); }
      b.appendChild(p);
    }
  }
  b.setAttribute("aria-label", m.text);
  return b;
}

function choose(moves, element) {
  // A piece's moves. A card or a deck: its choices, each played only when chosen (never at once).
  // A noble, a city, a post or your token (one move each): played by the click.
  const menu = $("menu");
  menu.replaceChildren();
  if (moves.length === 1 && !CARD_TARGET.test(element.id)) { app.choosing = null; sendMove(moves[0].id); return; }
  document.querySelectorAll("#table .choosing").forEach((e) => e.classList.remove("choosing"));
  element.classList.add("choosing");
  app.choosing = app.view ? { game: app.view.game_id, move: app.view.move, id: element.id } : null;
  menu.appendChild(el("div", "what", element.title || element.id));
  const face = element.face;
  const me = app.view && app.view.shown_seat !== null ? app.view.board.players[app.view.shown_seat] : null;
  if (face && face.sacrifice && moves.some((m) => m.verb.startsWith("buy") || m.verb === "reserve")) {
    menu.appendChild(el("div", "muted sacrifice-note", sacrificeNote(face, moves, me)));
  } else if (element.classList.contains("unaffordable")) {
    menu.appendChild(el("div", "muted", "you cannot pay for it now"));
  }
  const buttons = el("div", "choices");
  for (const m of moves) {
    const btn = moveLabel(m, face);
    btn.addEventListener("click", () => { closeMenu(); sendMove(m.id); });
    buttons.appendChild(btn);
  }
  const cancel = el("button", "cancel", "Cancel");
  cancel.addEventListener("click", closeMenu);
  buttons.appendChild(cancel);
  menu.appendChild(buttons);
  menu.onkeydown = (k) => { if (k.key === "Escape") { closeMenu(); element.focus(); } };
  placeMenu(menu, element);
  buttons.firstChild.focus({ preventScroll: true });
}

function placeMenu(menu, element) {
  // Beside the piece clicked, inside the window (under it, else above it).
  const r = element.getBoundingClientRect(), pad = 6;
  menu.style.left = "0px";
  menu.style.top = "0px";
  const m = menu.getBoundingClientRect();
  const left = Math.max(pad, Math.min(r.left, window.innerWidth - m.width - pad));
  let top = r.bottom + pad;
  if (top + m.height > window.innerHeight - pad) top = Math.max(pad, r.top - m.height - pad);
  menu.style.left = left + "px";
  menu.style.top = top + "px";
}

function closeMenu() {
  app.choosing = null;
  const menu = $("menu");
  if (menu) menu.replaceChildren();
  document.querySelectorAll("#table .choosing").forEach((e) => e.classList.remove("choosing"));
}
