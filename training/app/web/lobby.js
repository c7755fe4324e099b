"use strict";
// The lobby: the server's saved games (GET /api/lobby), each a link to its page; finished ones with their record.
function cell(row, content) {
  const td = document.createElement("td");
  if (typeof content === "string") td.textContent = content; else td.appendChild(content);
  row.appendChild(td);
}

function link(href, text, download) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  if (download) a.download = download;
  return a;
}

function state(game) {
  if (!game.over) return document.createTextNode("open");
  const r = game.result;
  const who = r.winners.length ? r.winners.map((w) => "player_" + w + " (" + game.agents[w] + ")").join(", ") : "nobody";
  const span = document.createElement("span");
  span.append((r.truncated ? "turn cap; winner: " : "won by ") + who + "; prestige " + r.prestige.join(" / ") + " ");
  span.appendChild(link("/api/games/" + game.game_id + "/record", "record", "game-" + game.game_id + ".jsonl"));
  return span;
}

async function showLobby() {
  const body = document.querySelector("#games tbody");
  try {
    const res = await fetch("/api/lobby");
    const data = await res.json();
    if (!res.ok) throw new Error(data.error || "HTTP " + res.status);
    body.replaceChildren();
    for (const game of data.games) {
      const row = document.createElement("tr");
      row.dataset.game = game.game_id;
      row.dataset.over = String(game.over);
      cell(row, link("/games/" + game.game_id, game.game_id));
      cell(row, game.agents.join(" vs "));
      cell(row, game.modules.join(", ") || "base");
      cell(row, String(game.move));
      cell(row, state(game));
      cell(row, new Date(game.updated * 1000).toLocaleString());
      body.appendChild(row);
    }
    if (!data.games.length) {
      const row = document.createElement("tr");
      cell(row, "no games yet");
      body.appendChild(row);
    }
  } catch (e) {
    document.getElementById("error").textContent = "no answer from the server: " + e.message;
  }
  document.body.dataset.ready = "true";
}
showLobby();
