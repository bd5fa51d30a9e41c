#!/usr/bin/env node
// A bot that plays a uniformly random legal action, in any game.
//
// Node.js, no dependencies.  Usage: node random_bot.js [SEED]  (`{seed}` in a bot command fills it in)
//
// Protocol (docs/protocol.md): one JSON object per line on stdin, one per line
// on stdout.  hello -> ready, request -> action, game_over -> wait for the
// next hello: it says "games": "many" in ready, so in a tournament one process
// plays game after game (protocol version 2); it exits when stdin ends.
// stderr is yours for diagnostics (the referee keeps it next to the record).
"use strict";

const readline = require("readline");

// A small seeded generator (mulberry32) so that a seed reproduces the bot's choices.
function makeRng(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const seedArg = process.argv[2];
const random = seedArg === undefined ? Math.random : makeRng(Number(seedArg));

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });

lines.on("line", (line) => {
  if (line.trim() === "") return;
  const msg = JSON.parse(line);
  switch (msg.type) {
    case "hello":
      // This bot decides from each request alone, so it asks for no events.
      send({ type: "ready", name: "js-random", events: false, games: "many" });
      break;
    case "request": {
      const legal = msg.legal;
      const action = legal[Math.floor(random() * legal.length)];
      send({ type: "action", id: msg.id, action: action });
      break;
    }
    default:
      break; // "game_over": the next hello or the end of stdin follows; "event": not asked for
  }
});

lines.on("close", () => process.exit(0));
