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

function cardEl(card, id) {
  const c = el("div", "piece card");
  c.id = id;
  if (!card) { c.appendChild(el("div", "eff", id.startsWith("slot") ? "(empty)" : "hidden")); return c; }
  const band = el("div", "band " + (card.colour || "none"));
  band.appendChild(el("span", "", card.points ? String(card.points) : ""));
  band.appendChild(el("span", "", "L" + card.level));
  c.appendChild(band);
  if (card.effect) c.appendChild(el("div", "eff", card.effect.replace(/_/g, " ")));
  const cost = el("div", "cost");
  card.cost.forEach((n, i) => { if (n) cost.appendChild(el("span", "pip " + GEMS[i], String(n))); });
  c.appendChild(cost);
  c.title = (card.colour || "colourless") + " card, " + card.points + " pts, cost " +
    card.cost.map((n, i) => n ? n + " " + GEMS[i] : "").filter(Boolean).join(", ");
  return c;
}

function reqEl(req) {
  const r = el("div", "cost");
  req.forEach((n, i) => { if (n) r.appendChild(el("span", "pip " + GEMS[i], String(n))); });
  return r;
}

function buildTable(view) {
  const b = view.board;
  const seat = view.shown_seat;
  const t = el("div");
  t.id = "table";
  if (b.orient_decks.length) t.className = "orient";
  const decision = el("div");
  decision.id = "decision";
  const menu = el("div");
  menu.id = "menu";
  t.append(decision, menu);
  // nobles, cities, trading posts
  const top = el("div", "row");
  const tile = (id, title, req, owner) => {  // a noble or a city: what it asks for, who holds it
    const x = el("div", "piece tile");
    x.id = id;
    x.appendChild(el("b", "", title));
    x.appendChild(reqEl(req));
    if (owner !== null) x.appendChild(el("span", "", "player_" + owner));
    top.appendChild(x);
  };
  b.nobles.forEach((n, i) => tile("noble-" + i, "noble " + n.points, n.req, n.owner));
  b.cities.forEach((c, i) =>
    tile("city-" + i, "city " + c.prestige + (c.same ? " +" + c.same + " same" : ""), c.req, c.owner));
  b.trading_posts.forEach((p, i) => {
    const x = el("div", "piece tile");
    x.id = "post-" + i;
    x.appendChild(el("b", "", p.name.replace(/_/g, " ")));
    x.appendChild(reqEl(p.req));
    const owners = b.players.map((q, s) => q.trading_posts.includes(p.name) ? "P" + s : "").filter(Boolean);
    if (owners.length) x.appendChild(el("span", "", owners.join(" ")));
    top.appendChild(x);
  });
  t.appendChild(top);
  // market: level 3 on top, each row its deck, four cards, then the Orient deck and its two cards
  for (let level = 2; level >= 0; level--) {
    const row = el("div", "row");
    const deck = el("div", "piece deck", "L" + (level + 1));
    deck.id = "deck-" + level;
    deck.appendChild(el("span", "", b.decks[level] + " left"));
    row.appendChild(deck);
    for (let k = 0; k < 4; k++) row.appendChild(slotEl(b.slots[level * 4 + k], b));
    if (b.orient_decks.length) {
      const od = el("div", "piece deck orient", "O" + (level + 1));
      od.id = "odeck-" + level;
      od.appendChild(el("span", "", b.orient_decks[level] + " left"));
      row.appendChild(od);
      for (let k = 0; k < 2; k++) row.appendChild(slotEl(b.slots[12 + level * 2 + k], b));
    }
    t.appendChild(row);
  }
  // the bank
  const bank = el("div", "row");
  for (const c of b.colours) {
    const g = el("div", "piece gem " + c, String(b.bank[c]));
    g.id = "bank-" + c;
    g.title = b.bank[c] + " " + c + " in the bank";
    bank.appendChild(g);
  }
  if (b.drawn.length) {
    b.drawn.forEach((card, k) => bank.appendChild(cardEl(card, "drawn-" + k)));
  }
  t.appendChild(bank);
  // the players
  const players = el("div", "players");
  b.players.forEach((p, s) => {
    const x = el("div", "piece player" + (s === b.current ? " on-move" : ""));
    x.id = "player-" + s;
    x.appendChild(el("b", "", view.names[s] + ": " + p.prestige + " pts" + (p.nobles ? ", " + p.nobles + " noble(s)" : "")));
    const toks = el("div", "mine");
    for (const c of b.colours) {
      const tok = el("span", "piece mini " + c, String(p.tokens[c]));
      if (s === seat) tok.id = "token-" + c;
      toks.appendChild(tok);
    }
    toks.appendChild(el("span", "", " bonus"));
    for (const c of GEMS) if (p.bonuses[c]) toks.appendChild(el("span", "mini " + c, "+" + p.bonuses[c]));
    x.appendChild(toks);
    const res = el("div", "mine");
    p.reserved.forEach((r, i) => {
      const card = cardEl(r.card, s === seat ? "reserved-" + i : "p" + s + "-reserved-" + i);
      card.style.setProperty("--card", "48px");
      res.appendChild(card);
    });
    if (p.reserved.length) x.appendChild(res);
    // your cards one by one only when one is to be chosen (an Orient pairing or sacrifice): else the bonuses say it
    if (Array.isArray(p.purchased) && view.legal.some((m) => m.target.startsWith("card-"))) {
      const owned = el("div", "mine");
      for (const card of p.purchased) {
        const m = el("span", "piece mini " + (card.colour || "none"), String(card.points || ""));
        m.id = "card-" + card.id;
        m.title = "your card " + card.id + (card.effect ? " (" + card.effect + ")" : "");
        owned.appendChild(m);
      }
      x.appendChild(owned);
    }
    if (p.trading_posts.length || p.stronghold_supply) {
      x.appendChild(el("div", "muted", (p.stronghold_supply ? p.stronghold_supply + " strongholds in hand " : "") +
        p.trading_posts.map((n) => n.replace(/_/g, " ")).join(", ")));
    }
    players.appendChild(x);
  });
  t.appendChild(players);
  return t;
}

function slotEl(slot, b) {
  const c = cardEl(slot.card, "slot-" + slot.slot);
  for (const sh of slot.strongholds || []) {
    c.appendChild(el("span", "pip none", "S" + sh.seat + (sh.count > 1 ? "x" + sh.count : "")));
  }
  return c;
}

function armTable(view) {
  // Give every acting piece its action ids and what a click on it does.
  app.pick = [];
  const byTarget = {};
  for (const m of view.legal) (byTarget[m.target] = byTarget[m.target] || []).push(m);
  const takes = byTarget.bank || [];
  const me = view.shown_seat === null ? null : view.board.players[view.shown_seat];
  for (const [target, moves] of Object.entries(byTarget)) {
    if (target === "bank" || target === "decision") continue;
    const e = $(target);
    if (!e) continue;
    e.dataset.action = moves.map((m) => m.id).join(" ");
    e.classList.add("legal");
    e.addEventListener("click", () => choose(moves, e));
  }
  for (const c of GEMS) {
    const e = $("bank-" + c);
    const mine = takes.filter((m) => m.gems.includes(c));
    if (!e || !mine.length || e.dataset.action) continue;
    e.dataset.action = mine.map((m) => m.id).join(" ");
    e.classList.add("legal");
    e.addEventListener("click", () => pickGem(c, takes));
  }
  // a market card you could buy but cannot afford now: visibly not
  if (me) {
    document.querySelectorAll("#table .card[id^=slot-]").forEach((e) => {
      const moves = byTarget[e.id] || [];
      if (!moves.some((m) => m.verb.startsWith("buy")) && e.querySelector(".band")) e.classList.add("unaffordable");
    });
  }
  const decision = $("decision");
  if (takes.length) {
    const confirm = el("button", "", "Take");
    confirm.id = "confirm";
    confirm.disabled = true;
    confirm.addEventListener("click", () => { if (confirm.dataset.action) sendMove(Number(confirm.dataset.action)); });
    const clear = el("button", "", "Clear");
    clear.id = "clear";
    clear.addEventListener("click", () => { app.pick = []; showPick(takes); });
    decision.append(el("span", "", "gems: click the stacks,"), confirm, clear);
  }
  for (const m of byTarget.decision || []) {
    const btn = el("button", "", m.text);
    btn.dataset.action = String(m.id);
    btn.addEventListener("click", () => sendMove(m.id));
    decision.appendChild(btn);
  }
}

function sameGems(a, b) { return a.length === b.length && a.slice().sort().join() === b.slice().sort().join(); }
function within(pick, gems) {
  const left = gems.slice();
  for (const g of pick) { const i = left.indexOf(g); if (i < 0) return false; left.splice(i, 1); }
  return true;
}

function pickGem(colour, takes) {
  const next = app.pick.concat([colour]);
  if (!takes.some((m) => within(next, m.gems))) return;  // not a legal take: the stack does nothing
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

function choose(moves, element) {
  // One move: play it. Several on one piece (buy / reserve / a stronghold's moves): a menu of them.
  const menu = $("menu");
  menu.replaceChildren();
  if (moves.length === 1 && !moves[0].verb.startsWith("buy")) { sendMove(moves[0].id); return; }
  menu.appendChild(el("span", "", element.title ? element.title + ":" : ""));
  for (const m of moves) {
    let label = m.verb;
    if (m.to) label += " to " + m.to.replace("slot-", "slot ");
    if (m.spends) {
      const paid = Object.entries(m.spends).map(([c, n]) => n + " " + c).join(", ");
      label += " (spends " + (paid || "nothing") + ")";
    }
    const btn = el("button", "", label);
    btn.dataset.action = String(m.id);
    btn.title = m.text;
    btn.addEventListener("click", () => sendMove(m.id));
    menu.appendChild(btn);
  }
  const cancel = el("button", "", "Cancel");
  cancel.addEventListener("click", () => menu.replaceChildren());
  menu.appendChild(cancel);
}

