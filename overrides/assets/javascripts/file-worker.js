// The offline copy's search worker as a real worker: loaded before iframe-worker's shim, in the offline copy only.
//
// From file:// a browser refuses `new Worker(file URL)`, so iframe-worker runs the worker in an iframe on the
// page's own thread, where loading the prebuilt index (9 MB) waits behind every keystroke the reader types and a
// broad query freezes the page while it is searched. A worker started from a blob: URL is a real one, and
// Chromium lets it import file:// scripts: it loads the prebuilt index on its own thread as the page loads, then
// the theme's worker. Where it cannot start or import (another browser's file:// rules), the messages sent so far
// go to iframe-worker's worker instead.
//
// Chromium 156.0.8078.114 (Debian's, December 2026) refuses those imports, which .73 allowed: there the refusal
// reaches the page only once the page's thread is free (after its load event, 200-350 ms after the worker
// started), and the fallback starts that late. So the outcome is remembered for this browser (its user agent) in
// localStorage, and a browser known to refuse goes straight to iframe-worker's worker on the next pages.
(() => {
  "use strict";
  if (location.protocol !== "file:" || typeof window.Worker !== "function" || typeof Blob !== "function") return;
  const MEMO = "pytorch-handbook:file-worker";
  const remember = (works) => {
    try {
      localStorage.setItem(MEMO, JSON.stringify({ agent: navigator.userAgent, works }));
    } catch {} // no storage for file:// pages: the next page tries again
  };
  try {
    const known = JSON.parse(localStorage.getItem(MEMO));
    if (known && known.agent === navigator.userAgent && known.works === false) return;
  } catch {}
  const Native = window.Worker;

  class FileWorker extends EventTarget {
    constructor(url) {
      super();
      this.url = new URL(url, location.href).href;
      this.onmessage = null;
      this.onerror = null;
      this.sent = []; // replayed to iframe-worker's worker if this one fails before it says it runs
      this.target = null;
      const prebuilt = new URL("../../../search/search_prebuilt.js", this.url).href;
      const source = [
        `self.__hbBase = ${JSON.stringify(this.url)};`,
        `try { importScripts(${JSON.stringify(prebuilt)}, self.__hbBase); postMessage({ __hbFileWorker: true }); }`,
        `catch (error) { postMessage({ __hbFileWorker: false, error: String(error) }); close(); }`,
      ].join("\n");
      try {
        this.worker = new Native(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
      } catch {
        this.fallBack();
        return;
      }
      this.worker.addEventListener("message", (event) => {
        const status = event.data && event.data.__hbFileWorker;
        if (status === true) this.use(this.worker);
        else if (status === false) this.fallBack();
        else this.forward("message", event);
      });
      this.worker.addEventListener("error", (event) => {
        if (this.target !== null) return this.forward("error", event);
        event.preventDefault();
        this.fallBack();
      });
    }

    use(worker) {
      this.target = worker;
      this.sent = null;
      if (worker === this.worker) remember(true);
    }

    fallBack() {
      if (this.target !== null) return;
      remember(false);
      if (this.worker) this.worker.terminate();
      const worker = new window.IFrameWorker(this.url);
      worker.addEventListener("message", (event) => this.forward("message", event));
      worker.addEventListener("error", (event) => this.forward("error", event));
      for (const message of this.sent) worker.postMessage(message);
      this.use(worker);
    }

    forward(type, event) {
      const copy =
        type === "message"
          ? new MessageEvent("message", { data: event.data })
          : new ErrorEvent("error", { message: event.message, error: event.error });
      this.dispatchEvent(copy);
      const handler = type === "message" ? this.onmessage : this.onerror;
      if (handler) handler.call(this, copy);
    }

    postMessage(message) {
      if (this.sent !== null) this.sent.push(message);
      (this.target || this.worker).postMessage(message);
    }

    terminate() {
      (this.target || this.worker).terminate();
    }
  }

  // iframe-worker's shim, loaded next, sets window.Worker to its own; it stays the fallback (window.IFrameWorker).
  Object.defineProperty(window, "Worker", { configurable: true, get: () => FileWorker, set: () => {} });
})();
