// The HTML replay: draws one frame of the page data (referee.replay.html.frames).
// Hand-written, no library; everything it needs is in #page-data.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("page-data").textContent);
  const F = D.frames;
  const CARD_GAME = D.game !== "pegs-and-jokers";
  const COLOURS = ["#d62828", "#1d5fd1", "#2a9d3c", "#f08a00", "#7b3fb8", "#12a4a8", "#8a5a2b", "#e05fa8"];
  const $ = (id) => document.getElementById(id);
  let step = 0;
  let view = "all";

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  const seatName = (s) => (D.seats[s] ? D.seats[s].name : "?");
  const seatLabel = (s) => `seat ${s} (${seatName(s)}, team ${s % D.teams})`;
  const sees = (s) => view === "all" || Number(view) === s;

  function card(c, extra) {
    const face = D.cards[c];
    if (!face) return el("span", { class: "card", "data-card": c, text: c });
    const e = el("span", { class: `card ${face.colour}${face.joker ? " joker" : ""}${extra ? " " + extra : ""}`,
      "data-card": c, title: face.title, "data-joker": face.joker },
      el("span", { class: "rank", text: face.rank }), el("span", { class: "suit", text: face.joker || face.suit }));
    return e;
  }
  const back = () => el("span", { class: "card back", title: "hidden card" });

  function cardsText(text) {  // an action's words, cards drawn as cards
    const out = el("span", { class: "action-text" });
    text.split(" ").forEach((w, i) => {
      if (i) out.append(" ");
      out.append(D.cards[w] ? card(w, "small") : w);
    });
    return out;
  }

  // --- the step control -----------------------------------------------------
  function go(i) {
    step = Math.max(0, Math.min(F.length - 1, Number(i) || 0));
    render();
  }
  function firstWhere(pred, from) {
    for (let i = from || 0; i < F.length; i++) if (pred(F[i], i)) return i;
    return -1;
  }
  function lastWhere(pred, before) {
    for (let i = before; i >= 0; i--) if (pred(F[i], i)) return i;
    return -1;
  }
  function jumpDeal(delta) {
    if (!CARD_GAME) return go(step + 10 * delta);
    const d = F[step].deal + delta;
    const i = delta > 0 ? firstWhere((f) => f.deal >= d, step) : firstWhere((f) => f.deal === d);
    go(i < 0 ? (delta > 0 ? F.length - 1 : 0) : i);
  }

  function setupControls() {
    $("step-slider").max = F.length - 1;
    $("step-input").max = F.length - 1;
    $("step-count").textContent = String(F.length - 1);
    $("first").onclick = () => go(0);
    $("prev").onclick = () => go(step - 1);
    $("next").onclick = () => go(step + 1);
    $("last").onclick = () => go(F.length - 1);
    $("step-slider").oninput = (e) => go(e.target.value);
    $("step-input").onchange = (e) => go(e.target.value);
    $("next-fault").disabled = !F.some((f) => f.kind === "fault");
    $("next-fault").onclick = () => { const i = firstWhere((f) => f.kind === "fault", step + 1);
      go(i < 0 ? firstWhere((f) => f.kind === "fault") : i); };
    const jumps = $("jumps");
    const box = (id, label, onchange) => {
      const input = el("input", { id, type: "number", min: "1" });
      input.onchange = () => onchange(Number(input.value));
      jumps.append(el("label", {}, label + " ", input), " ");
    };
    if (CARD_GAME) {
      box("jump-deal", "Deal", (d) => { const i = firstWhere((f) => f.deal === d); if (i >= 0) go(i); });
      box("jump-trick", "Trick", (t) => {
        const d = F[step].deal;
        const i = firstWhere((f) => f.deal === d && f.trick_no === t && f.trick && f.trick.cards.length > 0);
        if (i >= 0) go(i);
      });
    } else {
      box("jump-turn", "Turn", (t) => { const i = firstWhere((f) => f.turn >= t); if (i >= 0) go(i); });
    }
    const select = $("view");
    D.seats.forEach((s) => select.append(el("option", { value: String(s.seat), text: `seat ${s.seat}'s view (${s.name})` })));
    select.onchange = () => { view = select.value; render(); };
    document.addEventListener("keydown", (e) => {
      const t = e.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
      if (e.key === "ArrowRight") { e.shiftKey ? jumpDeal(1) : go(step + 1); }
      else if (e.key === "ArrowLeft") { e.shiftKey ? jumpDeal(-1) : go(step - 1); }
      else if (e.key === "Home") go(0);
      else if (e.key === "End") go(F.length - 1);
      else return;
      e.preventDefault();
    });
    const m = /(?:^|[#&])step=(\d+)/.exec(location.hash);
    const v = /(?:^|[#&])view=(\d+|all)/.exec(location.hash);
    if (v) { view = v[1]; select.value = view; }
    if (m) step = Math.min(F.length - 1, Number(m[1]));
  }

  // --- one frame ------------------------------------------------------------
  const KIND_TEXT = { start: "start", move: "decision", deal: "new deal", fault: "fault", end: "result" };

  function render() {
    const f = F[step];
    const root = $("step");
    root.dataset.step = String(step);
    root.dataset.kind = f.kind;
    root.dataset.done = String(f.done);
    if (f.n !== null) root.dataset.n = String(f.n); else root.removeAttribute("data-n");
    if (CARD_GAME) root.dataset.deal = String(f.deal); else root.dataset.turn = String(f.turn);
    root.dataset.view = view;
    $("step-slider").value = String(step);
    $("step-input").value = String(step);
    $("frame-kind").textContent = KIND_TEXT[f.kind] || f.kind;
    renderStatus(f);
    renderFault(f);
    renderInfo(f);
    if (CARD_GAME) renderTable(f); else { renderPegHands(f); renderBoard(f); }
    renderScore(f);
    renderResult(f);
  }

  function renderStatus(f) {
    const line = $("action-line");
    line.replaceChildren();
    line.removeAttribute("data-seat");
    line.removeAttribute("data-action");
    if (f.kind === "move") {
      line.dataset.seat = String(f.seat);
      const shown = f.public || sees(f.seat);
      if (shown) line.dataset.action = f.action;
      line.append(`#${f.n} ${seatLabel(f.seat)} — ${f.decision}: `,
        shown ? cardsText(f.action) : el("i", { text: "(private)" }), ` (${f.ms} ms)`);
      if (sees(f.seat)) line.append(el("div", { class: "legal", id: "legal", text: "legal: " + f.legal.join(", ") }));
    } else if (f.kind === "fault") {
      line.dataset.seat = String(f.seat);
      line.append(`${seatLabel(f.seat)} forfeits at its ${f.decision || "next"} decision`);
    }
    const next = $("next-line");
    next.textContent = f.next ? ` · next: seat ${f.next.seat} (${f.next.decision})` : "";
  }

  function renderFault(f) {
    const box = $("fault");
    box.replaceChildren();
    if (f.kind !== "fault") { box.hidden = true; box.removeAttribute("data-reason"); return; }
    const x = f.fault;
    box.hidden = false;
    box.dataset.reason = x.reason;
    box.dataset.seat = String(x.seat);
    box.append(el("div", {}, el("b", { text: `Fault: ${x.reason}` }), ` — ${seatLabel(x.seat)}`),
      el("div", { id: "fault-message", text: x.message }));
    if (!sees(x.seat)) return;  // another seat's request, reply and stderr stay private
    for (const [k, v] of Object.entries(x.extra || {})) {
      box.append(el("div", { "data-field": k }, el("b", { text: k + ": " }),
        el("pre", { id: "fault-" + k.replace(/[^a-z0-9_-]/gi, "_"), text: typeof v === "string" ? v : JSON.stringify(v) })));
    }
    if (f.legal && f.legal.length) box.append(el("div", { class: "legal", text: "legal then: " + f.legal.join(", ") }));
    if (x.stderr_tail && x.stderr_tail.length)
      box.append(el("div", {}, el("b", { text: "stderr (last lines):" }), el("pre", { id: "fault-stderr", text: x.stderr_tail.join("\n") })));
  }

  function item(label, value, id) {
    return el("span", { id }, el("b", { text: label + ": " }), value);
  }

  function renderInfo(f) {
    const info = $("info");
    info.replaceChildren();
    if (CARD_GAME) {
      info.append(item("Deal", `${f.deal}${f.h ? " (" + f.h + " cards)" : ""}${f.redeals ? ", redeal " + f.redeals : ""}`, "deal"),
        item("Dealer", `seat ${f.dealer}`, "dealer"),
        item("Trump", f.trump ? cardsSuit(f.trump) : "none", "trump"));
      if (f.turn_up) info.append(item("Turned up", card(f.turn_up, "small"), "turn-up"));
      if (f.joker_discard) info.append(item("Joker discard", card(f.joker_discard.card, "small"), "joker-discard"));
      info.append(item("Contracts", f.contracts ? f.contracts.map((c, t) => D.game === "back-alley" ? `team ${t}: ${c}` : c).join(" · ") : "—", "contracts"));
      info.append(item("Tricks", f.tricks_won.map((n, t) => `team ${t}: ${n}`).join(" · "), "tricks-won"));
      if (f.points) info.append(item("Points", Object.entries(f.points).map(([k, v]) => `${k}: ${v === null ? "—" : "team " + v}`).join(", "), "points"));
      info.append(item("Phase", f.phase, "phase"));
    } else {
      info.append(item("Turn", String(f.turn), "turn"),
        item(f.kind === "move" ? "Colour moved" : "Colour to move", f.colour === null ? "—" : `${f.colour}`, "colour"),
        item("Draw pile", String(f.draw_pile), "draw-pile"),
        item("Discard pile", f.discard_top ? card(f.discard_top, "small") : "empty", "discard-top"),
        item("Home", f.home.map((n, c) => `${c}: ${n}`).join(" · "), "home"),
        item("Hits", f.hits.map((n, s) => `${s}: ${n}`).join(" · "), "hits"));
    }
  }
  function cardsSuit(s) {  // a suit letter drawn with its symbol and colour (the ace's face has both)
    const face = D.cards["A" + s];
    return face ? el("span", { class: `suit-name ${face.colour}`, "data-suit": s, text: `${face.suit} ${s}` }) : s;
  }

  function handBox(f, s, extraKids) {
    const acting = (f.kind === "move" && f.seat === s) || (f.kind === "fault" && f.seat === s);
    const box = el("div", { class: `seat${acting ? " acting" : ""}${f.kind === "fault" && f.seat === s ? " faulty" : ""}`, "data-seat": String(s) });
    box.append(el("span", { class: "who", text: `seat ${s} · ${seatName(s)} · team ${s % D.teams}` }));
    for (const k of extraKids || []) box.append(k);
    const hand = el("div", { class: "hand", "data-seat": String(s), "data-hidden": sees(s) ? null : "true" });
    for (const c of f.hands[s]) hand.append(sees(s) ? card(c) : back());
    box.append(hand);
    return box;
  }

  function renderTable(f) {
    const table = $("table");
    table.replaceChildren();
    const t = f.trick;
    const wrap = el("div", { id: "trick-wrap" });
    wrap.append(el("div", { text: t ? `Trick ${f.trick_no} — ${t.winner !== null ? "won by seat " + t.winner : "seat " + t.leader + " leads"}` : "No trick in play" }));
    const trick = el("div", { id: "trick", "data-leader": t ? String(t.leader) : null, "data-winner": t && t.winner !== null ? String(t.winner) : null });
    if (t) for (const [s, c] of t.cards) {
      trick.append(el("div", { class: `played${t.winner === s ? " winner" : ""}`, "data-seat": String(s) }, card(c), el("div", { text: `seat ${s}${s === t.leader ? " (led)" : ""}` })));
    }
    wrap.append(trick);
    table.append(wrap);
    for (let s = 0; s < f.hands.length; s++) {
      const bid = f.bids && f.bids[s] !== null && f.bids[s] !== undefined ? f.bids[s] : "—";
      const extra = [el("span", { class: "bid", "data-seat": String(s), text: `bid: ${bid}` })];
      if (f.discards && sees(s) && f.discards[s].length) {
        const d = el("div", { class: "discards", text: "discarded: " });
        for (const c of f.discards[s]) d.append(card(c, "small"));
        extra.push(d);
      }
      const box = handBox(f, s, extra);
      if (f.kind === "move" && f.decision === "play" && f.seat === s && sees(s)) box.dataset.played = f.action;
      table.append(box);
    }
  }

  function renderPegHands(f) {
    const table = $("table");
    table.replaceChildren();
    for (let s = 0; s < f.hands.length; s++) {
      const box = handBox(f, s, []);
      box.style.borderLeft = `8px solid ${COLOURS[s]}`;
      table.append(box);
    }
  }

  // --- the Pegs and Jokers board (RULES.md PJ-2) ---------------------------
  let holes = null;  // hole name -> circle element
  let marks = null;  // rings over the holes the last move ended on
  // The start area: five holes just inside the come-out hole (side position, depth in holes).
  const START_SPOTS = [[7, 2], [8, 2], [9, 2], [7.5, 3], [8.5, 3]];
  function buildBoard() {
    const B = D.board, N = B.players, size = 600, c = size / 2;
    const reach = Math.max(...Array.from({ length: N }, (_, k) => { const a = (-90 - 180 / N + (360 * k) / N) * Math.PI / 180;
      return Math.max(Math.abs(Math.cos(a)), Math.abs(Math.sin(a))); }));
    const R = 262 / reach;  // the ring fills the square whatever its number of sides
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `-45 -45 ${size + 90} ${size + 90}`);  // room for the side labels
    svg.setAttribute("id", "board");
    const mk = (tag, attrs) => { const e = document.createElementNS(ns, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); svg.append(e); return e; };
    const vert = (k) => { const a = (-90 - 180 / N + (360 * k) / N) * Math.PI / 180; return [c + R * Math.cos(a), c + R * Math.sin(a)]; };
    holes = {};
    const spacing = (2 * R * Math.sin(Math.PI / N)) / B.side;
    const r = Math.min(6.5, spacing * 0.36);
    const hole = (name, x, y, cls, colour) => {
      const e = mk("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: r.toFixed(1), class: "hole" + (cls ? " " + cls : ""), "data-hole": name });
      if (colour !== undefined) e.style.stroke = COLOURS[colour];
      holes[name] = e;
      return e;
    };
    for (let p = 0; p < N; p++) {
      const [x0, y0] = vert(p), [x1, y1] = vert(p + 1);
      const mx = (x0 + x1) / 2, my = (y0 + y1) / 2;
      const len = Math.hypot(mx - c, my - c), nx = (c - mx) / len, ny = (c - my) / len;  // inward
      const ux = (x1 - x0) / B.side, uy = (y1 - y0) / B.side;
      const at = (i, depth) => [x0 + ux * (i + 0.5) + nx * depth * spacing, y0 + uy * (i + 0.5) + ny * depth * spacing];
      mk("line", { x1: x0.toFixed(1), y1: y0.toFixed(1), x2: x1.toFixed(1), y2: y1.toFixed(1), stroke: COLOURS[p], "stroke-width": (r * 2.8).toFixed(1), "stroke-opacity": "0.35", "stroke-linecap": "round" });
      const [sx, sy] = at(8, 2.4);
      mk("circle", { cx: sx.toFixed(1), cy: sy.toFixed(1), r: (1.9 * spacing).toFixed(1), fill: COLOURS[p], "fill-opacity": "0.15", "data-start": String(p) });
      for (let i = 0; i < B.side; i++) {
        const t = p * B.side + i, [x, y] = at(i, 0);
        const cls = t === B.come_out[p] ? "come-out" : t === B.in_spot[p] ? "in-spot" : "";
        const e = hole(`T${t}`, x, y, cls, cls ? p : undefined);
        const title = document.createElementNS(ns, "title");
        title.textContent = `T${t}${cls === "come-out" ? ` (come-out hole of ${p})` : cls === "in-spot" ? ` (in-spot of ${p})` : ""}`;
        e.append(title);
      }
      const ii = B.in_spot[p] - p * B.side;
      for (let k = 1; k <= B.home_holes; k++) { const [x, y] = at(ii, 1.1 * k); hole(`${p}:H${k}`, x, y, "home", p); }
      START_SPOTS.forEach(([i, depth], k) => { const [x, y] = at(i, depth); hole(`${p}:S${k + 1}`, x, y, "start", p); });
      const [lx, ly] = at(B.side / 2 - 0.5, -1.9);
      let angle = Math.atan2(y1 - y0, x1 - x0) * 180 / Math.PI;  // along the side, never upside down
      if (angle > 90.5 || angle < -90.5) angle += 180;
      const label = mk("text", { x: lx.toFixed(1), y: ly.toFixed(1), "text-anchor": "middle", "dominant-baseline": "middle",
        transform: `rotate(${angle.toFixed(1)} ${lx.toFixed(1)} ${ly.toFixed(1)})`, "data-side": String(p) });
      label.textContent = `${p} · ${seatName(p)}`;
    }
    marks = document.createElementNS(ns, "g");
    marks.setAttribute("id", "moved-marks");
    svg.append(marks);
    $("board-wrap").append(svg);
  }

  function renderBoard(f) {
    if (!holes) buildBoard();
    for (const e of Object.values(holes)) { e.removeAttribute("data-peg"); e.style.fill = ""; e.classList.remove("peg"); }
    marks.replaceChildren();
    f.pegs.forEach((pegs, colour) => {
      let inStart = 0;
      for (const pos of pegs) {
        const name = pos === "S" ? `${colour}:S${++inStart}` : pos[0] === "H" ? `${colour}:${pos}` : pos;
        const e = holes[name];
        if (!e) continue;
        e.setAttribute("data-peg", String(colour));
        e.style.fill = COLOURS[colour];
        e.classList.add("peg");
      }
    });
    for (const [colour, , dst] of f.kind === "move" ? f.moved : []) {
      const name = dst === "S" ? null : dst[0] === "H" ? `${colour}:${dst}` : dst;
      const e = name && holes[name];
      if (!e) continue;
      const ring = document.createElementNS("http://www.w3.org/2000/svg", "circle");
      for (const [k, v] of Object.entries({ cx: e.getAttribute("cx"), cy: e.getAttribute("cy"), r: String(Number(e.getAttribute("r")) + 3), class: "moved", fill: "none", "data-moved": name })) ring.setAttribute(k, v);
      marks.append(ring);
    }
  }

  // --- score and result -----------------------------------------------------
  function renderScore(f) {
    const box = $("score");
    box.replaceChildren();
    const table = el("table", { id: "score-table" });
    if (CARD_GAME) {
      table.append(el("tr", {}, ...D.score_header.map((h) => el("th", { text: h }))));
      let current = null;
      for (const row of D.score_rows) {
        const tr = el("tr", { "data-deal": String(row.deal), "data-step": String(row.step), class: row.step > step ? "future" : "" },
          ...row.cells.map((v) => el("td", { text: v === null ? "—" : String(v) })));
        if (row.step <= step) current = tr;
        table.append(tr);
      }
      if (current) current.classList.add("current");
      const now = el("tr", { id: "score-now" }, el("th", { colspan: String(D.score_header.length - D.teams), text: "Now" }));
      f.scores.forEach((v, t) => now.append(el("td", { "data-total-team": String(t), text: String(v) })));
      table.append(now);
    } else {
      table.append(el("tr", {}, ...["Team", "Seats", "Pegs home"].map((h) => el("th", { text: h }))));
      f.scores.forEach((v, t) => {
        const seats = D.seats.filter((s) => s.team === t).map((s) => s.seat).join(", ");
        table.append(el("tr", {}, el("td", { text: String(t) }), el("td", { text: seats }), el("td", { "data-total-team": String(t), text: String(v) })));
      });
    }
    box.append(table);
  }

  function renderResult(f) {
    const box = $("result");
    if (f.kind !== "end" || !f.result) { box.textContent = D.truncated && step === F.length - 1 ? "The record ends here: the game did not finish." : ""; return; }
    const r = f.result;
    box.textContent = `Result: ${r.status} (${r.reason}); winners: ${r.winners.length ? r.winners.map((t) => "team " + t).join(", ") : "nobody"}; scores ${r.scores.join(" / ")}; ${r.decisions} decisions`;
  }

  setupControls();
  render();
})();
