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
const clock = (iso) => iso ? new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "–";

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, Object.assign({}, options, { headers }));
  if (response.status === 401) { needToken(); throw new Error("token needed"); }
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new Error(body.detail || body.error || response.statusText);
  return body;
}

// MARK: live tiles

const sides = new Map();   // "serial/side" -> tile elements
function tile(serial, side) {
  const key = `${serial}/${side}`;
  if (sides.has(key)) return sides.get(key);
  const value = (name, unit) => {
    const v = el("span", { class: "value", "data-reading": name }, "–");
    return [el("div", { class: "reading" }, v, el("span", { class: "unit" }, unit)), v];
  };
  const [hrBox, hr] = value("heartRate", "heart bpm");
  const [brBox, br] = value("breathingRate", "breaths/min");
  const [mvBox, mv] = value("movement", "movement");
  const presence = el("span", { class: "presence" }, "–");
  const time = el("div", { class: "time" }, "");
  const card = el("div", { class: "card tile", id: `tile-${side}`, "data-side": side },
    el("h3", {}, `${side[0].toUpperCase()}${side.slice(1)}`, presence), el("div", { class: "readings" }, hrBox, brBox, mvBox), time);
  $("live").append(card);
  const t = { card, hr, br, mv, presence, time };
  sides.set(key, t);
  return t;
}

function showLive(m) {
  // `/live` keeps a pod's last second after it went away (connected false): that is no reading.
  if (m.connected === false) { showGone(m.serial, m.side, m.time); return; }
  const t = tile(m.serial, m.side);
  delete t.card.dataset.stale;
  t.card.dataset.present = m.present;
  t.presence.textContent = m.present ? (m.stage ? `in bed · ${m.stage}` : "in bed") : "empty";
  t.hr.textContent = m.present ? fmt(m.heartRate) : "–";
  t.br.textContent = m.present ? fmt(m.breathingRate, 1) : "–";
  t.mv.textContent = m.present ? fmt(m.movement, 1) : "–";
  t.time.textContent = `${new Date(m.time).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit", second: "2-digit" })}`
    + ` · signal ${fmt((m.quality || 0) * 100)} %`;
}

// The pod went away: its tiles say so and keep no value that would read as live.
function showGone(serial, side, time) {
  const tiles = side ? [tile(serial, side)] : [...sides.entries()].filter(([k]) => k.startsWith(`${serial}/`)).map(([, t]) => t);
  for (const t of tiles) {
    t.card.dataset.present = false;
    t.card.dataset.stale = true;
    t.presence.textContent = "pod disconnected";
    for (const v of [t.hr, t.br, t.mv]) v.textContent = "–";
    if (time) t.time.textContent = `last reading ${new Date(time).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" })}`;
  }
}

// The live stream: Server-Sent Events read through fetch, so a token can go in a header.
async function stream() {
  for (;;) {
    try {
      const headers = token ? { Authorization: `Bearer ${token}` } : {};
      const response = await fetch("/api/v1/live/events", { headers });
      if (response.status === 401) { needToken(); return; }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
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
    setStatus("disconnected", "reconnecting…");
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function handle(m) {
  switch (m.type) {
    case "live": showLive(m); setStatus("connected", `pod ${m.serial} live`); break;
    case "pod_connected": setStatus("connected", `pod ${m.serial} connected`); loadPods(); break;
    case "pod_disconnected": setStatus("disconnected", `pod ${m.serial} disconnected`); showGone(m.serial); loadPods(); break;
    case "night_finished": loadNights(); break;
    case "wake": if (["out_of_bed", "back_in_bed", "decided"].includes(m.kind)) loadNights(); break;
    case "schedule_pushed": case "alarm": loadSchedule(); break;
  }
}

// Without the token nothing loads: say so where the connection state is shown, not "connecting…".
function needToken() {
  $("auth").hidden = false;
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
  const hours = [];
  for (let t = Math.ceil(start / 3600000) * 3600000; t <= end; t += 3600000) hours.push(t);
  for (const t of hours) {
    // Centred under its hour, but kept inside the chart at the right edge.
    const anchor = x(t) > width - right - 24 ? "end" : "middle";
    const label = svgEl("text", { x: Math.min(x(t), width - right), y: height - 6, class: "axis", "text-anchor": anchor });
    label.textContent = new Date(t).toLocaleTimeString([], { hour: "2-digit" });
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

async function loadNights() {
  try {
    const list = await api("/api/v1/nights");
    const finals = list.nights.filter((n) => n.final);
    const box = $("nights");
    if (!finals.length) return;
    box.replaceChildren();
    for (const side of ["left", "right"]) {
      const last = finals.filter((n) => n.side === side).sort((a, b) => a.end < b.end ? 1 : -1)[0];
      if (!last) continue;
      const detail = await api(`/api/v1/nights/${last.wakeDate}/${side}`);
      box.append(el("div", { class: "card night", "data-side": side },
        el("h3", {}, `${side} · night to ${last.wakeDate} · ${clock(last.start)}–${clock(last.end)}`,
          el("span", { class: "score", title: "score out of 100" }, String(last.score))),
        hypnogram(detail), legend(), metricsGrid(last),
        ...(detail.wake ? [el("p", { class: "wake", title: "smart wake: the window, why the alarm rang when it did, repeats and snoozes" },
          detail.wake.summary)] : [])));
    }
    trend(finals);
  } catch (e) { console.warn("nights", e); }
}

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
function trend(nights) {
  const box = $("trend");
  box.replaceChildren();
  if (!nights.length) return;
  const newest = Math.max(...nights.map((n) => dayNumber(n.wakeDate)));
  const slotOf = (n) => 13 - (newest - dayNumber(n.wakeDate));
  for (const side of ["left", "right"]) {
    const list = nights.filter((n) => n.side === side && slotOf(n) >= 0);
    if (!list.length) continue;
    const width = chartWidth("trend"), height = 170, bottom = 22, w = width / 14;
    const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, class: "trend", role: "img", "aria-label": `14-night trend, ${side}` });
    const maxMin = Math.max(600, ...list.map((n) => n.metrics.totalSleepMinutes));
    list.forEach((n) => {
      const h = (height - bottom - 20) * n.metrics.totalSleepMinutes / maxMin;
      const slot = slotOf(n), x = slot * w + w * 0.15;
      const bar = svgEl("rect", { x, y: height - bottom - h, width: w * 0.7, height: h, rx: 3, fill: "var(--core)", opacity: 0.75,
        "data-date": n.wakeDate, "data-slot": slot });
      const title = svgEl("title");
      title.textContent = `${n.wakeDate}: ${hm(n.metrics.totalSleepMinutes)} asleep, score ${n.score}, heart ${fmt(n.metrics.meanHeartRate)} bpm`;
      bar.append(title);
      svg.append(bar);
      const sy = height - bottom - (height - bottom - 20) * n.score / 100;
      svg.append(svgEl("circle", { cx: x + w * 0.35, cy: sy, r: 4, fill: "var(--awake)" }));
      const label = svgEl("text", { x: x + w * 0.35, y: height - 6, class: "axis", "text-anchor": "middle" });
      label.textContent = n.wakeDate.slice(8);
      svg.append(label);
      if (n.metrics.meanHeartRate) {
        const hr = svgEl("text", { x: x + w * 0.35, y: height - bottom - h - 4, class: "axis", "text-anchor": "middle" });
        hr.textContent = fmt(n.metrics.meanHeartRate);
        svg.append(hr);
      }
    });
    box.append(el("div", { class: "card night" }, el("h3", {}, `${side}: sleep time (bars), score (dots), heart rate (bpm)`), svg));
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
  } catch (e) { /* no pod yet */ }
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

async function loadPods() {
  try {
    const { pods } = await api("/api/v1/pods");
    if (!pods.length) return;
    const rows = pods.map((p) => el("tr", {}, el("th", {}, p.serial),
      el("td", {}, p.connected ? `connected since ${new Date(p.since).toLocaleString()}` : `not connected${p.disconnectReason ? ` (${p.disconnectReason})` : ""}`,
        el("div", { class: "muted" }, [p.firmware && `firmware ${p.firmware}`, p.sides && `${p.sides} sides × ${p.channelsPerSide} channels`,
          p.counters && `${p.counters.frames} frames, ${p.counters.crcErrors} CRC errors, ${p.counters.droppedFrames} dropped, ${p.counters.reconnects} reconnects`,
          p.clock.set ? "clock set" : "clock not set"].filter(Boolean).join(" · ")))));
    $("pods").replaceChildren(el("div", { class: "card" }, el("table", {}, ...rows)));
    const connected = pods.find((p) => p.connected);
    setStatus(connected ? "connected" : "disconnected", connected ? `pod ${connected.serial} connected` : "no pod connected");
  } catch (e) { /* shown by the status pill */ }
}

async function loadLive() {
  try { for (const s of (await api("/api/v1/live")).sides) showLive(s); } catch (e) { /* stream will fill in */ }
}

$("schedule-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const body = { side: f.get("side"), bedtime: f.get("bedtime"), wake: f.get("wake") };
  if (f.get("weekendBedtime")) body.weekendBedtime = f.get("weekendBedtime");
  if (f.get("weekendWake")) body.weekendWake = f.get("weekendWake");
  changeSchedule("PUT", body);
});
$("schedule-clear").addEventListener("click", () => changeSchedule("DELETE", { side: new FormData($("schedule-form")).get("side") }));
$("auth-form").addEventListener("submit", (e) => {
  e.preventDefault();
  token = $("auth-token").value;
  localStorage.setItem("podbridge-token", token);
  $("auth").hidden = true;
  start();
});

// Once the first loads have settled (each one shows what it got, or keeps its placeholder),
// <body data-loaded="true"> says so: a script or a headless browser can wait for it.
function start() {
  stream();
  Promise.allSettled([loadPods(), loadLive(), loadNights(), loadSchedule()])
    .then(() => { document.body.dataset.loaded = "true"; });
  setInterval(() => { loadPods(); loadSchedule(); }, 60000);
}
start();
