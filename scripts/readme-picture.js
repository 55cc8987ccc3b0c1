// Screenshots one trial of a report.html in headless Chromium over the DevTools
// protocol (headless --screenshot cannot scroll): the trial's block from its top,
// WIDTH x HEIGHT CSS pixels. Used by scripts/readme-picture.sh.
//
//   node --experimental-websocket readme-picture.js DEVTOOLS_WS_URL PAGE_URL TRIAL_ID OUT.png WIDTH HEIGHT
"use strict";
const fs = require("fs");
const [ws, url, trial, out, width, height] = process.argv.slice(2);

const socket = new WebSocket(ws);
let next = 0;
const waiting = new Map();
function send(method, params, sessionId) {
  const id = ++next;
  socket.send(JSON.stringify({ id, method, params: params || {}, sessionId }));
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  const w = message.id && waiting.get(message.id);
  if (!w) return;
  waiting.delete(message.id);
  if (message.error) w.reject(new Error(JSON.stringify(message.error)));
  else w.resolve(message.result);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

socket.onopen = async () => {
  try {
    const { targetId } = await send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
    const call = (method, params) => send(method, params, sessionId);
    await call("Emulation.setDeviceMetricsOverride", {
      width: Number(width), height: Number(height), deviceScaleFactor: 1, mobile: false,
    });
    await call("Page.enable");
    await call("Page.navigate", { url });
    // The page is ready when its script has drawn the trial's steps.
    let top = null;
    for (let i = 0; i < 100 && top === null; i++) {
      await sleep(100);
      const { result } = await call("Runtime.evaluate", {
        expression: `(function () {
          var block = Array.prototype.find.call(document.querySelectorAll(".trial"),
            function (b) { return b.getAttribute("data-trial") === ${JSON.stringify(trial)}; });
          if (!block || !block.querySelector(".steps")) return null;
          return block.getBoundingClientRect().top + window.scrollY;
        })()`,
        returnByValue: true,
      });
      top = result.value;
    }
    if (top === null) throw new Error("the trial's steps never appeared: " + trial);
    const { data } = await call("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: true,
      clip: { x: 0, y: top - 8, width: Number(width), height: Number(height), scale: 1 },
    });
    fs.writeFileSync(out, Buffer.from(data, "base64"));
    socket.close();
    process.exit(0);
  } catch (e) {
    console.error(String(e));
    process.exit(1);
  }
};
