// One board that follows the selected move: the turn picked in the move list (or by the
// URL's #tN, or with the arrow keys) shows its details and the board before it, with the
// play made filled in amber and the best play (or the alternative clicked) outlined. No
// element has the id tN, so choosing a turn never scrolls the page.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("game-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const CELL = 26, PAD = 18;
  const svg = document.getElementById("board");
  const turns = Array.from(document.querySelectorAll("section.turn"));
  const links = Array.from(document.querySelectorAll("#moves a"));

  function el(name, attrs, text) {
    const node = document.createElementNS(NS, name);
    for (const key in attrs) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function letterAt(x, y, letter, colour) {
    return el("text", {x: x + CELL / 2, y: y + CELL / 2 + 5, "font-size": 14, "font-weight": 600,
      "text-anchor": "middle", fill: colour}, letter);
  }

  function draw(turn, outlined) {
    const rows = data.boards[turn].split("/");
    const made = new Map((data.made[turn] || []).map(([r, c, ch]) => [r * data.cols + c, ch]));
    const best = new Map((outlined || []).map(([r, c, ch]) => [r * data.cols + c, ch]));
    const w = PAD + data.cols * CELL + 2, h = PAD + data.rows * CELL + 2;
    svg.replaceChildren();
    svg.setAttribute("width", w);
    svg.setAttribute("height", h);
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    for (let c = 0; c < data.cols; c++)
      svg.append(el("text", {x: PAD + c * CELL + CELL / 2, y: 12, "font-size": 10, "text-anchor": "middle"},
        String.fromCharCode(65 + c)));
    for (let r = 0; r < data.rows; r++) {
      svg.append(el("text", {x: 9, y: PAD + r * CELL + CELL / 2 + 4, "font-size": 10, "text-anchor": "middle"},
        String(r + 1)));
      const row = Array.from(rows[r]);
      for (let c = 0; c < data.cols; c++) {
        const x = PAD + c * CELL, y = PAD + r * CELL, at = r * data.cols + c;
        const premium = data.premiums[r][c];
        let letter = row[c] === "." ? null : row[c];
        let fill = letter ? "#e9c98f" : data.fills[premium];
        if (made.has(at)) { fill = "#ffc928"; letter = made.get(at); }
        svg.append(el("rect", {x, y, width: CELL, height: CELL, fill, stroke: "#fff", "stroke-width": 1}));
        const label = data.labels[premium];
        if (label && !letter && !best.has(at))
          svg.append(el("text", {x: x + CELL / 2, y: y + CELL / 2 + 3, "font-size": 8, "text-anchor": "middle",
            fill: "#333", opacity: 0.75}, label));
        if (best.has(at)) {
          svg.append(el("rect", {x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, fill: "none",
            stroke: "#1b7f2a", "stroke-width": 2.5, "stroke-dasharray": "4 2"}));
          if (!letter) { svg.append(letterAt(x, y, best.get(at), "#1b7f2a")); continue; }
        }
        if (letter) {
          const blank = letter !== letter.toUpperCase();
          svg.append(letterAt(x, y, letter, blank ? "#7a1f1f" : "#222"));
          if (!blank && data.values[letter])
            svg.append(el("text", {x: x + CELL - 3, y: y + CELL - 3, "font-size": 7, "text-anchor": "end",
              fill: "#444"}, String(data.values[letter])));
        }
      }
    }
  }

  let current = -1;
  function select(turn, alternative) {
    if (!(turn in data.boards)) return;
    current = turn;
    for (const section of turns) section.hidden = Number(section.dataset.t) !== turn;
    for (const link of links) link.classList.toggle("on", Number(link.dataset.t) === turn);
    const alts = data.alts[turn] || [];
    const shown = alternative === undefined ? 0 : alternative;
    draw(turn, alts[shown]);
    const section = turns.find((s) => Number(s.dataset.t) === turn);
    if (section) for (const row of section.querySelectorAll("tr[data-alt]"))
      row.classList.toggle("shown", Number(row.dataset.alt) === shown);
    document.getElementById("board-turn").textContent = data.captions[turn];
  }

  function fromHash() {
    const m = /^#t(\d+)$/.exec(location.hash);
    select(m ? Number(m[1]) : data.first);
  }

  document.addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-alt]");
    if (row) select(current, Number(row.dataset.alt));
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp" && event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const order = links.map((link) => Number(link.dataset.t));
    const at = order.indexOf(current);
    const step = event.key === "ArrowDown" || event.key === "ArrowRight" ? 1 : -1;
    const next = order[Math.min(order.length - 1, Math.max(0, at + step))];
    if (next !== undefined) { history.replaceState(null, "", `#t${next}`); select(next); event.preventDefault(); }
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
