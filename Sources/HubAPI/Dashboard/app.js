// podbridge dashboard: plain JavaScript, no build step. Reads the hub's API (docs/api.md):
// live tiles from the live stream, last night's hypnogram, a 14-night trend, the schedule
// with a form to set or clear a manual one, the pod's status.
"use strict";

const STAGES = ["awake", "rem", "core", "deep"];           // rows, top to bottom
const STAGE_COLOURS = { awake: "var(--awake)", rem: "var(--rem)", core: "var(--core)", deep: "var(--deep)", in_bed: "var(--inbed)" };
let token = localStorage.getItem("podbridge-token") || "";
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
};
const svgEl = (tag, attrs = {}) => {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
};
const fmt = (v, digits = 0) => (v === undefined || v === null || Number.isNaN(v)) ? "–" : Number(v).toFixed(digits);
// Rounded to the minute first: 59.7 min is "1h00", not "0h60".
const hm = (minutes) => {
  const m = Math.round(minutes);
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}`;
};
// Times are shown on the hub's clock (its zone comes with the night list), as the wake window,
// the schedule and the hub's own lines are: a phone in another zone used to put a night's start
// and end in its zone and the wake window beside them in the hub's.
let hubZone;
const zoned = (options, zone) => {
  const z = zone || hubZone;
  if (!z) return options;
  try { new Intl.DateTimeFormat([], { timeZone: z }); return Object.assign({ timeZone: z }, options); } catch (e) { return options; }
};
const clock = (iso, zone) => iso ? new Date(iso).toLocaleTimeString([], zoned({ hour: "2-digit", minute: "2-digit" }, zone)) : "–";
const moment = (iso, options) => new Date(iso).toLocaleString([], zoned(options));
// The zone comes with the nights; the pods' answer may come first and is drawn again with it.
function setHubZone(zone) {
  if (!zone || zone === hubZone) return;
  hubZone = zone;
  if (podsAnswer) drawPods(podsAnswer, false);
}

class TokenNeeded extends Error {}

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (token) headers.Authorization = `Bearer ${token}`;
  // Relative to the page (no leading "/"), so a hub served on a sub-path behind a reverse
  // proxy (`/podbridge/`) is asked at that path, not at the proxy's root.
  const response = await fetch(path.replace(/^\//, ""), Object.assign({}, options, { headers }));
  if (response.status === 401) { needToken(); throw new TokenNeeded("token needed"); }
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new Error(body.detail || body.error || response.statusText);
  return body;
}

// A section whose load failed says so: its placeholder ("No night stored yet") would be false.
// Without the token nothing loads, and the token card says that once.
function showFailure(id, what, e) {
  if (e instanceof TokenNeeded) return;
  $(id).replaceChildren(el("p", { class: "error", role: "alert" }, `Could not load ${what}: ${e.message || e}`));
}

// MARK: live tiles

const sides = new Map();   // "serial/side" -> tile elements
function tile(serial, side) {
  const key = `${serial}/${side}`;
  if (sides.has(key)) return sides.get(key);
  $("live").querySelector(":scope > p")?.remove();
  const value = (name, unit) => {
    const v = el("span", { class: "value", "data-reading": name }, "–");
    // "breaths/min" may break after its slash on a narrow tile, not inside a word.
    const parts = unit.split("/").flatMap((p, i) => i ? [el("wbr"), `/${p}`] : [p]);
    return [el("div", { class: "reading" }, v, el("span", { class: "unit" }, ...parts)), v];
  };
  const [hrBox, hr] = value("heartRate", "heart bpm");
  const [brBox, br] = value("breathingRate", "breaths/min");
  const [mvBox, mv] = value("movement", "movement");
  const presence = el("span", { class: "presence" }, "–");
  const time = el("div", { class: "time" }, "");
  const card = el("div", { class: "card tile", id: `tile-${side}`, "data-side": side, "data-key": key },
    el("h3", {}, `${side[0].toUpperCase()}${side.slice(1)}`, presence), el("div", { class: "readings" }, hrBox, brBox, mvBox), time);
  // Left before right, whichever side's reading came first.
  const after = [...$("live").children].find((c) => c.dataset.key > key);
  $("live").insertBefore(card, after || null);
  const t = { card, hr, br, mv, presence, time, stage: null, last: null, arrived: performance.now() };
  sides.set(key, t);
  return t;
}

function showLive(m, fromStream = false) {
  // `/live` keeps a pod's last second after it went away (connected false): that is no reading.
  if (m.connected === false) { showGone(m.serial, m.side, m.time); return; }
  const t = tile(m.serial, m.side);
  // A side gone silent (the watchdog below) comes back with a newer second, not with `/live`'s
  // copy of the last one it had: a hub whose pod stalled still answers that.
  if (t.card.dataset.silent && !fromStream && t.last && Date.parse(m.time) <= Date.parse(t.last)) return;
  t.arrived = performance.now();
  delete t.card.dataset.stale;
  delete t.card.dataset.silent;
  t.card.dataset.present = m.present;
  // `/live` carries the night's preliminary stage; the stream's `live` messages do not, its
  // `stage` messages do (showStage), so the last one is kept until the sleeper leaves.
  if (m.stage) t.stage = m.stage;
  if (!m.present) t.stage = null;
  t.last = m.time;
  t.presence.textContent = m.present ? (t.stage ? `in bed · ${t.stage}` : "in bed") : "empty";
  t.hr.textContent = m.present ? fmt(m.heartRate) : "–";
  t.br.textContent = m.present ? fmt(m.breathingRate, 1) : "–";
  t.mv.textContent = m.present ? fmt(m.movement, 1) : "–";
  t.time.textContent = `${moment(m.time, { weekday: "short", hour: "2-digit", minute: "2-digit", second: "2-digit" })}`
    + ` · signal ${fmt((m.quality || 0) * 100)} %`;
}

function showStage(m) {
  const t = tile(m.serial, m.side);
  t.stage = m.stage;
  if (t.card.dataset.present === "true" && !t.card.dataset.stale) t.presence.textContent = `in bed · ${m.stage}`;
}

// The pod went away, or the page lost the hub: the tiles say so and keep no value that would
// read as live, only when the last reading was.
function showGone(serial, side, time, why = "pod disconnected", only = null) {
  const tiles = only ? [only] : side ? [tile(serial, side)]
    : [...sides.entries()].filter(([k]) => serial === null || k.startsWith(`${serial}/`)).map(([, t]) => t);
  for (const t of tiles) {
    delete t.card.dataset.silent;
    t.card.dataset.present = false;
    t.card.dataset.stale = true;
    t.presence.textContent = why;
    for (const v of [t.hr, t.br, t.mv]) v.textContent = "–";
    if (time) t.last = time;
    const last = t.last;
    t.time.textContent = last ? `last reading ${moment(last, { weekday: "short", hour: "2-digit", minute: "2-digit" })}` : "";
  }
}

// The live stream: Server-Sent Events read through fetch, so a token can go in a header.
// Once connected the pill says what the hub says of its pod (loadPods); when the stream ends
// (the hub stopped or the network went) the tiles stop reading as live until it is back.
let streaming = false, streamedBefore = false;
let streamControl = null, streamOpened = 0, lastMessage = 0, silenceAborted = false;
async function stream() {
  if (streaming) return;
  streaming = true;
  for (;;) {
    try {
      const headers = token ? { Authorization: `Bearer ${token}` } : {};
      streamControl = new AbortController();
      streamOpened = performance.now();
      silenceAborted = false;
      const response = await fetch("api/v1/live/events", { headers, signal: streamControl.signal });
      if (response.status === 401) { needToken(); streaming = false; return; }
      if (!response.ok) throw new Error(response.statusText);
      // start() loads them with the page; a reconnect catches up on what the gap missed.
      if (streamedBefore) { loadPods(); loadLive(); }
      streamedBefore = true;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        lastMessage = performance.now();
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) handle(JSON.parse(data));
        }
      }
    } catch (e) { /* reconnect below */ }
    // Closed by the watchdog for its silence: the tiles already say how long no reading came;
    // whether the hub is there at all the next attempt finds out.
    if (!silenceAborted) {
      showGone(null, null, null, "no connection to the hub");
      setStatus("disconnected", "hub not reachable, reconnecting…");
      podsStale();
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

// A hub that hangs (frozen, or a network that drops packets without a reset) ends no stream:
// the last numbers would stay up as live. While a side shows readings its `live` message comes
// every second, so a side silent for SILENCE_MS is greyed out ("no reading for N s") and the
// stream is opened again; the next second that arrives brings the side back.
const SILENCE_MS = 10000;
function watchSilence() {
  const now = performance.now();
  let silent = 0;
  for (const t of sides.values()) {
    if (t.card.dataset.stale && !t.card.dataset.silent) continue;   // gone for a reason already shown
    const quiet = now - t.arrived;
    if (quiet < SILENCE_MS) continue;
    silent = Math.max(silent, quiet);
    showGone(null, null, null, `no reading for ${Math.floor(quiet / 1000)} s`, t);
    t.card.dataset.silent = true;
  }
  if (!silent) return;
  setStatus("disconnected", `no reading for ${Math.floor(silent / 1000)} s, reconnecting…`);
  if (streamControl && now - Math.max(streamOpened, lastMessage) >= SILENCE_MS) {
    silenceAborted = true;
    streamControl.abort();
    streamControl = null;
  }
}
setInterval(watchSilence, 1000);

function handle(m) {
  switch (m.type) {
    case "live": showLive(m, true); if (![...sides.values()].some((t) => t.card.dataset.silent)) setStatus("connected", `pod ${m.serial} live`); break;
    case "stage": showStage(m); break;
    case "pod_connected": setStatus("connected", `pod ${m.serial} connected`); loadPods(); break;
    case "pod_disconnected": setStatus("disconnected", `pod ${m.serial} disconnected`); showGone(m.serial); loadPods(); break;
    case "link_problem": case "power": loadPods(); break;
    case "night_finished": loadNights(); break;
    case "wake": if (["out_of_bed", "back_in_bed", "decided"].includes(m.kind)) loadNights(); break;
    case "schedule_pushed": case "alarm": loadSchedule(); break;
    case "presence_power": case "presence_power_settings": loadPresencePower(); break;
  }
}

// Without the token nothing loads: say so where the connection state is shown, not "connecting…".
function needToken() {
  $("auth").hidden = false;
  for (const p of document.querySelectorAll("[data-loading]")) p.textContent = "waiting for the token";
  setStatus("disconnected", token ? "token refused" : "token needed");
}

function setStatus(state, text) {
  const s = $("pod-status");
  s.dataset.state = state;
  s.textContent = text;
}

// MARK: nights

// A chart's width in SVG units is the pixels it gets (at most 720), so its 11-px labels stay
// 11 px on a phone instead of shrinking with a 720-unit drawing (about 6 px at 412 px wide).
function chartWidth(containerId) {
  const box = $(containerId);
  return Math.round(Math.max(300, Math.min(720, (box && box.clientWidth ? box.clientWidth : 720) - 34)));
}

function hypnogram(detail) {
  const width = chartWidth("nights"), height = 180, left = 48, right = 8, top = 8, rowH = 36;
  const zone = detail.night.timeZone;
  const start = Date.parse(detail.night.start), end = Date.parse(detail.night.end);
  const x = (t) => left + (width - left - right) * (t - start) / Math.max(1, end - start);
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, class: "hypnogram", role: "img",
    "aria-label": `Hypnogram of the night of ${detail.night.wakeDate}, ${detail.night.side}` });
  STAGES.forEach((stage, i) => {
    const label = svgEl("text", { x: 0, y: top + i * rowH + rowH / 2 + 4, class: "axis" });
    label.textContent = stage;
    svg.append(label);
    svg.append(svgEl("line", { x1: left, x2: width - right, y1: top + (i + 1) * rowH, y2: top + (i + 1) * rowH, stroke: "var(--line)" }));
  });
  for (const b of detail.blocks) {
    const row = STAGES.indexOf(b.stage);
    if (row < 0) continue;
    const x0 = x(Date.parse(b.start)), x1 = x(Date.parse(b.end));
    svg.append(svgEl("rect", { x: x0, y: top + row * rowH + 4, width: Math.max(1, x1 - x0), height: rowH - 8, rx: 2,
      fill: STAGE_COLOURS[b.stage], "data-stage": b.stage }));
  }
  // Every hour while the labels have room (about 44 px each), else every second or third.
  const hourWidth = (width - left - right) * 3600000 / Math.max(1, end - start);
  const step = Math.max(1, Math.ceil(44 / Math.max(1, hourWidth))) * 3600000;
  const hours = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) hours.push(t);
  for (const t of hours) {
    // Centred under its hour, but kept inside the chart at the right edge.
    const anchor = x(t) > width - right - 24 ? "end" : "middle";
    const label = svgEl("text", { x: Math.min(x(t), width - right), y: height - 6, class: "axis", "text-anchor": anchor });
    label.textContent = new Date(t).toLocaleTimeString([], zoned({ hour: "2-digit" }, zone));
    svg.append(label);
  }
  return svg;
}

function metricsGrid(n) {
  const m = n.metrics;
  const item = (label, value) => el("div", {}, label, el("b", {}, value));
  return el("div", { class: "metrics" },
    item("asleep", hm(m.totalSleepMinutes)), item("in bed", hm(m.timeInBedMinutes)),
    item("efficiency", `${fmt(m.efficiency)} %`), item("deep", hm(m.deepMinutes)), item("REM", hm(m.remMinutes)),
    item("awake after onset", `${fmt(m.wasoMinutes)} min`), item("heart", `${fmt(m.meanHeartRate)} bpm`),
    item("breathing", `${fmt(m.meanBreathingRate, 1)} /min`),
    // Minutes the link was down have no stage (a gap in the hypnogram) and count neither way.
    ...(unmeasured(m) >= 1 ? [item("no data", hm(unmeasured(m)))] : []));
}

function unmeasured(m) {
  return m.timeInBedMinutes - m.awakeMinutes - m.coreMinutes - m.deepMinutes - m.remMinutes;
}

// Each finished night and each wake event reloads the nights; a load that a newer one overtook
// is dropped, so two loads never both fill the section (a stale night's card used to stay on top).
let nightsLoad = 0;
async function loadNights() {
  const load = ++nightsLoad;
  try {
    const list = await api("/api/v1/nights");
    setHubZone(list.timeZone);
    const finals = list.nights.filter((n) => n.final);
    const shown = [];
    for (const side of ["left", "right"]) {
      // The newest wake date's night: its longest session (not a nap ending later that day),
      // and the detail of that same session.
      const ofSide = finals.filter((n) => n.side === side);
      const newest = ofSide.reduce((date, n) => n.wakeDate > date ? n.wakeDate : date, "");
      const last = ofSide.filter((n) => n.wakeDate === newest)
        .sort((a, b) => b.metrics.timeInBedMinutes - a.metrics.timeInBedMinutes)[0];
      if (!last) continue;
      const detail = await api(`/api/v1/nights/${last.wakeDate}/${side}?session=${last.id}`);
      shown.push({ side, last, detail });
    }
    if (load !== nightsLoad) return;
    drawn = { shown, finals };
    drawNights();
  } catch (e) {
    if (load !== nightsLoad) return;
    drawn = null;
    showFailure("nights", "the nights", e);
    showFailure("trend", "the nights", e);
  }
}

// What the charts were last drawn from: a width change (a phone turned) draws them again at
// the new width, whose labels would otherwise shrink or grow with the old drawing.
let drawn = null, drawnWidth = 0;
function drawNights() {
  if (!drawn) return;
  drawnWidth = chartWidth("nights");
  const cards = drawn.shown.map(({ side, last, detail }) => el("div", { class: "card night", "data-side": side },
    el("h3", {}, `${side} · night to ${last.wakeDate} · ${clock(last.start, last.timeZone)}–${clock(last.end, last.timeZone)}`,
      el("span", { class: "score", role: "img", "aria-label": `score ${last.score} of 100`, title: "score out of 100" }, String(last.score))),
    hypnogram(detail), legend(), metricsGrid(last),
    ...(detail.wake ? [el("p", { class: "wake", title: "smart wake: the window, why the alarm rang when it did, repeats and snoozes" },
      detail.wake.summary)] : [])));
  $("nights").replaceChildren(...(cards.length ? cards : [el("p", { class: "muted" }, "No night stored yet.")]));
  trend(drawn.finals);
}
let resizing;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => { if (drawn && chartWidth("nights") !== drawnWidth) drawNights(); }, 200);
});

function legend() {
  const box = el("div", { class: "legend" });
  for (const s of STAGES) { const span = el("span", {}, s); span.style.setProperty("--c", STAGE_COLOURS[s]); box.append(span); }
  return box;
}

// Days since 1970 of a `YYYY-MM-DD` wake date (a calendar day, so UTC arithmetic is exact).
function dayNumber(date) {
  const [y, m, d] = date.split("-").map(Number);
  return Math.round(Date.UTC(y, m - 1, d) / 86400000);
}

// Sleep time bars, score dots and mean heart rate per night, one chart per side. The 14 slots
// are the 14 days up to the newest night of either side, so a night sits on its own day: a
// missed night leaves its day empty and both sides' charts share one axis.
// A day may hold several sessions (a nap, a night split by getting up): its entry is the
// longest, as the night detail (`/nights/{wakeDate}/{side}`) chooses.
function nightPerDay(nights) {
  const byDay = new Map();
  const length = (n) => Date.parse(n.end) - Date.parse(n.start);
  for (const n of nights) {
    const key = `${n.side}/${n.wakeDate}`;
    if (!byDay.has(key) || length(n) > length(byDay.get(key))) byDay.set(key, n);
  }
  return [...byDay.values()];
}

function trend(all) {
  const box = $("trend");
  const nights = nightPerDay(all);
  if (!nights.length) { box.replaceChildren(el("p", { class: "muted" }, "No nights yet.")); return; }
  box.replaceChildren();
  const newest = Math.max(...nights.map((n) => dayNumber(n.wakeDate)));
  const slotOf = (n) => 13 - (newest - dayNumber(n.wakeDate));
  for (const side of ["left", "right"]) {
    const list = nights.filter((n) => n.side === side && slotOf(n) >= 0);
    if (!list.length) continue;
    // Gutters for the axes: hours asleep on the left, the score on the right.
    const width = chartWidth("trend"), height = 196, bottom = 36, top = 34, left = 30, right = 28, w = (width - left - right) / 14;
    const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, class: "trend", role: "group", "aria-label": `14-night trend, ${side}` });
    // Whole hours at the top, so the grid lines fall on even hours.
    const maxMin = Math.ceil(Math.max(600, ...list.map((n) => n.metrics.totalSleepMinutes)) / 120) * 120;
    const plot = height - bottom - top, yOf = (share) => height - bottom - plot * share;
    const label = (x, y, text, cls, anchor = "middle") => { const t = svgEl("text", { x, y, class: cls, "text-anchor": anchor }); t.textContent = text; svg.append(t); };
    for (let minutes = 0; minutes <= maxMin; minutes += 120) {
      const y = yOf(minutes / maxMin);
      svg.append(svgEl("line", { x1: left, x2: width - right, y1: y, y2: y, class: "grid", "data-hours": minutes / 60 }));
      label(left - 4, y + 4, `${minutes / 60} h`, "axis hours-axis", "end");
    }
    for (const score of [0, 50, 100]) label(width - right + 3, yOf(score / 100) + 4, String(score), "axis score-axis", "start");
    // The values are printed, not only drawn (a phone has no hover): score and heart rate in
    // rows above the bars, the hours asleep under each bar above its day; a tap on a day
    // writes the whole night out under the chart.
    const readout = el("p", { class: "readout muted", "aria-live": "polite" }, "Tap a day for its night.");
    list.forEach((n) => {
      const h = plot * n.metrics.totalSleepMinutes / maxMin;
      const slot = slotOf(n), x = left + slot * w + w * 0.15, cx = x + w * 0.35;
      const summary = `${n.wakeDate}: ${hm(n.metrics.totalSleepMinutes)} asleep, score ${n.score}, heart ${fmt(n.metrics.meanHeartRate)} bpm`;
      const bar = svgEl("rect", { x, y: height - bottom - h, width: w * 0.7, height: h, rx: 3, fill: "var(--core)", opacity: 0.75,
        "data-date": n.wakeDate, "data-slot": slot, "data-side": side });
      const title = svgEl("title");
      title.textContent = summary;
      bar.append(title);
      svg.append(bar);
      const sy = yOf(n.score / 100);
      svg.append(svgEl("circle", { cx, cy: sy, r: 4, fill: "var(--awake)" }));
      label(cx, 12, String(n.score), "value-label score-label");
      if (n.metrics.meanHeartRate) label(cx, 27, fmt(n.metrics.meanHeartRate), "axis");
      label(cx, height - 22, (n.metrics.totalSleepMinutes / 60).toFixed(1), "value-label hours-label");
      label(cx, height - 6, n.wakeDate.slice(8), "axis");
      // The whole day's column answers a tap, not only the bar.
      const hit = svgEl("rect", { x: left + slot * w, y: 0, width: w, height, fill: "transparent", class: "hit", tabindex: 0,
        role: "button", "aria-label": summary, "data-date": n.wakeDate });
      const show = () => { readout.textContent = summary; for (const o of svg.querySelectorAll(".hit")) o.classList.toggle("chosen", o === hit); };
      hit.addEventListener("click", show);
      hit.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); show(); } });
      svg.append(hit);
    });
    box.append(el("div", { class: "card night trend-card" },
      el("h3", {}, side), el("p", { class: "legend-text muted" }, "score (top row; dots, right axis) · heart rate bpm (second row) · hours asleep (bars, left axis, printed below)"),
      svg, readout));
  }
}

// MARK: schedule and pod

async function loadSchedule() {
  try {
    const s = await api("/api/v1/schedule");
    const rows = s.sides.map((side) => el("tr", {},
      el("th", {}, side.side),
      el("td", {}, side.inForce ? `${side.inForce.summary} (${side.inForce.origin})` : "nothing worked out yet",
        el("br"), el("span", { class: "muted" }, side.inForce ? (side.inForce.acknowledged ? "acknowledged by the pod" : "not yet acknowledged") : ""),
        side.manual ? el("div", { class: "muted" }, `manual: ${side.manual.weekdayBedtime}–${side.manual.weekdayWake}, weekend ${side.manual.weekendBedtime}–${side.manual.weekendWake}`) : "",
        side.inference ? el("div", { class: "muted" }, `inference: ${side.inference.summary} — ${side.inference.reason}`) : "")));
    $("schedule").replaceChildren(el("div", { class: "card" }, el("table", {}, ...rows)));
    manuals = new Map(s.sides.filter((side) => side.manual).map((side) => [side.side, side.manual]));
    fillScheduleForm();
  } catch (e) {
    // 404: no pod known yet; anything else is a failure.
    if (/no pod/i.test(e.message)) $("schedule").replaceChildren(el("p", { class: "muted" }, "No pod known yet."));
    else showFailure("schedule", "the schedule", e);
  }
}

// Presence-driven power under the schedule, per side: its switch, away and rules as controls
// (each change is a PUT /presence-power/settings of that one field), and the last change it made
// with its reason ("left power off at 07:42: bed empty for 15 min").
const PRESENCE_CONTROLS = [
  { field: "enabled", label: "presence-driven power", of: (side) => side.enabled },
  { field: "away", label: "away (no warm-up)", of: (side) => side.away },
  { field: "keepOnWhileOccupied", label: "keep on while in bed" },
  { field: "offWhenLeft", label: "off when the bed is left" },
  { field: "offWhenLeftMinutes", label: "off after (min)", min: 3, max: 120 },
  { field: "awayAfterNights", label: "away after empty nights (0: never)", min: 0, max: 30 },
];

async function loadPresencePower() {
  try {
    const p = await api("/api/v1/presence-power");
    const cards = p.sides.map((side) => {
      const last = p.changes.filter((c) => c.side === side.side).at(-1);
      const result = el("p", { class: "muted presence-result", "aria-live": "polite" });
      const controls = PRESENCE_CONTROLS.map((c) => {
        const value = c.of ? c.of(side) : side.settings[c.field];
        const input = c.min === undefined
          ? el("input", { type: "checkbox", name: c.field, "data-side": side.side })
          : el("input", { type: "number", name: c.field, min: c.min, max: c.max, step: 1, value, "data-side": side.side });
        if (c.min === undefined) input.checked = value;
        input.addEventListener("change", () => changePresencePower(p.pod, side.side, c.field,
          c.min === undefined ? input.checked : Number(input.value), result,
          () => { if (c.min === undefined) input.checked = value; else input.value = value; }));
        return el("label", { class: "presence-control" }, input, " ", c.label);
      });
      const why = last ? last.text : "no change yet";
      return el("div", { class: "card presence-side", "data-side": side.side, "data-enabled": String(side.enabled), "data-away": String(side.away) },
        el("h3", {}, side.side),
        el("p", { class: "presence-last" }, why, last && !["ack", "pushed"].includes(last.outcome) ? el("span", { class: "muted" }, ` (not done: ${last.outcome})`) : ""),
        ...controls,
        el("p", { class: "muted" }, `${side.emptyNights} empty night${side.emptyNights === 1 ? "" : "s"} in a row · ${side.source === "set" ? "set here" : "from the configuration"}`),
        result);
    });
    $("presence-power").replaceChildren(el("p", { class: "muted" }, p.enabled
      ? "Presence-driven power: the bed follows the sleeper inside the schedule."
      : "Presence-driven power is off on both sides: switch it on for a side below."), ...cards);
  } catch (e) {
    // No pod known yet: the schedule says so already.
    $("presence-power").replaceChildren();
  }
}

// A refused change puts the control back to what is in force and says why on the card.
async function changePresencePower(pod, side, field, value, result, revert) {
  result.textContent = "saving…";
  try {
    await api("/api/v1/presence-power/settings", { method: "PUT", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ pod, side, [field]: value }) });
    await loadPresencePower();
  } catch (e) {
    revert();
    result.textContent = `not changed: ${e.message}`;
  }
}

// The form starts from the manual schedule in force (the chosen side's, for "both" the first
// side's), weekend included, until the user edits it. Empty weekend fields mean "as on
// weekdays", so they are filled only when the weekend differs: a weekday time changed and
// submitted keeps the stored weekend (it used to be overwritten with the weekday times).
let manuals = new Map();
function fillScheduleForm() {
  const form = $("schedule-form");
  if (form.dataset.edited) return;
  const side = form.elements.side.value;
  const manual = manuals.get(side) || (side === "both" ? manuals.get("left") || manuals.get("right") : null);
  if (!manual) return;
  form.elements.bedtime.value = manual.weekdayBedtime;
  form.elements.wake.value = manual.weekdayWake;
  const differs = manual.weekendBedtime !== manual.weekdayBedtime || manual.weekendWake !== manual.weekdayWake;
  form.elements.weekendBedtime.value = differs ? manual.weekendBedtime : "";
  form.elements.weekendWake.value = differs ? manual.weekendWake : "";
  if (differs) form.querySelector("details").open = true;
}

async function changeSchedule(method, body) {
  const result = $("schedule-result");
  try {
    const path = method === "DELETE" ? `/api/v1/schedule/manual?side=${encodeURIComponent(body.side)}` : "/api/v1/schedule/manual";
    const answer = await api(path, method === "DELETE" ? { method } :
      { method, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    result.textContent = answer.lines.join(" ");
    loadSchedule();
  } catch (e) { result.textContent = `Not changed: ${e.message}`; }
}

let podsAnswer = null;
async function loadPods() {
  try {
    const answer = await api("/api/v1/pods");
    podsAnswer = answer;
    drawPods(answer);
  } catch (e) { showFailure("pods", "the pods", e); }
}

// The hub lost: what the Pod section shows is what it last knew, and says so.
function podsStale() {
  const box = $("pods");
  if (!podsAnswer || box.dataset.stale) return;
  box.dataset.stale = "true";
  box.prepend(el("p", { class: "muted", id: "pods-stale" }, "Last known state: the hub is not reachable."));
  for (const td of box.querySelectorAll("td[data-connected]")) td.firstChild.textContent = `last known: ${td.firstChild.textContent}`;
}

function drawPods({ pods, linkProblem }, withStatus = true) {
  delete $("pods").dataset.stale;
  // A pod found but refused (permission, another program, no HELLO) says why, not "no pod".
  const problem = linkProblem ? el("div", { class: "card", role: "alert", id: "link-problem" },
    el("strong", { class: "error" }, "The hub cannot use the pod it found"), el("div", {}, linkProblem.detail),
    el("div", { class: "muted" }, `since ${moment(linkProblem.since, { dateStyle: "medium", timeStyle: "short" })}`)) : null;
  const lead = problem ? [problem] : [];
  if (!pods.length) {
    $("pods").replaceChildren(...lead, ...(problem ? [] : [el("p", { class: "muted" }, "No pod seen yet.")]));
    if (withStatus) setStatus("disconnected", problem ? "pod cannot be used" : "no pod seen yet");
    return;
  }
  const rows = pods.map((p) => el("tr", {}, el("th", {}, p.serial),
    el("td", { "data-connected": p.connected }, p.connected ? `connected since ${moment(p.since, { dateStyle: "medium", timeStyle: "short" })}` : `not connected${p.disconnectReason ? ` (${p.disconnectReason})` : ""}`,
      el("div", { class: "muted" }, [p.firmware && `firmware ${p.firmware}`, p.sides && `${p.sides} sides × ${p.channelsPerSide} channels`,
        p.counters && `${p.counters.frames} frames, ${p.counters.crcErrors} CRC errors, ${p.counters.droppedFrames} dropped, ${p.counters.reconnects} reconnects`,
        p.clock.set ? "clock set" : "clock not set",
        p.connected && p.power && `power ${Object.entries(p.power).map(([side, on]) => `${side} ${on ? "on" : "off"}`).join(", ")}`]
        .filter(Boolean).join(" · ")))));
  $("pods").replaceChildren(...lead, el("div", { class: "card" }, el("table", {}, ...rows)));
  const connected = pods.find((p) => p.connected);
  if (withStatus) setStatus(connected ? "connected" : "disconnected",
    connected ? `pod ${connected.serial} connected` : problem ? "pod cannot be used" : "no pod connected");
}

// MARK: HomeKit

// While the bridge is unpaired: the setup payload's QR code (drawn from the hub's modules:
// no script from elsewhere) and the code in digits. Paired: says so. HomeKit off: no section.
async function loadHomeKit() {
  let answer;
  try { answer = await api("/api/v1/homekit"); } catch (e) { $("homekit-section").hidden = true; return; }
  $("homekit-section").hidden = false;
  if (answer.paired) {
    $("homekit").replaceChildren(el("div", { class: "card", "data-homekit": "paired" },
      el("p", {}, "Paired with Apple Home."),
      el("p", { class: "muted" }, "To pair again, stop the hub and run podbridge homekit reset.")));
    return;
  }
  const quiet = 4, size = answer.qr.length + 2 * quiet;
  const qr = svgEl("svg", { viewBox: `0 0 ${size} ${size}`, class: "qr", role: "img", width: 200, height: 200,
    "aria-label": `QR code for adding podbridge to Apple Home, setup code ${answer.setupCode}`, "data-payload": answer.setupPayload });
  qr.append(svgEl("rect", { width: size, height: size, fill: "#fff" }));
  answer.qr.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) if (row[x] === "1") qr.append(svgEl("rect", { x: x + quiet, y: y + quiet, width: 1, height: 1, fill: "#000" }));
  });
  $("homekit").replaceChildren(el("div", { class: "card", "data-homekit": "unpaired" },
    el("p", {}, "In the Home app: Add Accessory, then scan this code, or type the setup code."),
    qr, el("p", { class: "setup-code", "data-setup-code": answer.setupCode }, answer.setupCode)));
}

async function loadLive() {
  try {
    const answer = await api("/api/v1/live");
    for (const s of answer.sides) showLive(s);
    if (!sides.size) $("live").replaceChildren(el("p", { class: "muted" }, "No reading yet."));
  } catch (e) {
    // Tiles already shown keep the stream's readings; an empty section says why it is empty.
    if (!sides.size) showFailure("live", "the live readings", e);
  }
}

$("schedule-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const body = { side: f.get("side"), bedtime: f.get("bedtime"), wake: f.get("wake") };
  if (f.get("weekendBedtime")) body.weekendBedtime = f.get("weekendBedtime");
  if (f.get("weekendWake")) body.weekendWake = f.get("weekendWake");
  changeSchedule("PUT", body);
});
$("schedule-form").addEventListener("input", (e) => {
  $("schedule-result").textContent = "";
  // Choosing the side shows that side's schedule; editing a time keeps the form as edited.
  if (e.target.name === "side") fillScheduleForm();
  else e.currentTarget.dataset.edited = "true";
});
$("schedule-clear").addEventListener("click", () => changeSchedule("DELETE", { side: new FormData($("schedule-form")).get("side") }));
$("auth-form").addEventListener("submit", (e) => {
  e.preventDefault();
  token = $("auth-token").value;
  localStorage.setItem("podbridge-token", token);
  $("auth").hidden = true;
  for (const p of document.querySelectorAll("[data-loading]")) p.textContent = "loading…";
  setStatus("unknown", "connecting…");
  start();
});

// Once the first loads have settled (each one shows what it got, or keeps its placeholder),
// <body data-loaded="true"> says so: a script or a headless browser can wait for it.
let polling;
function start() {
  stream();
  Promise.allSettled([loadPods(), loadLive(), loadNights(), loadSchedule(), loadPresencePower(), loadHomeKit()])
    .then(() => { document.body.dataset.loaded = "true"; });
  polling ??= setInterval(() => { loadPods(); loadSchedule(); loadHomeKit(); }, 60000);
}
start();
