// tocsin studio: times in the browser's zone (UTC stays in the title), and live panels that
// re-fetch every 5 s while they hold a non-terminal item, then stop. No dependencies.
"use strict";
(function () {
  var POLL_MS = 5000;
  var state = { polls: 0, timers: 0 };
  window.tocsinStudio = state;

  function localize(root) {
    var times = root.querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var el = times[i];
      var at = new Date(el.getAttribute("datetime"));
      if (isNaN(at.getTime())) continue;
      el.textContent = at.toLocaleString(undefined, {
        year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
      });
    }
  }

  function setPolling(el, on) {
    el.setAttribute("data-polling", on ? "on" : "off");
  }

  function schedule(el) {
    if (el.getAttribute("data-live") !== "1") {
      setPolling(el, false);
      return;
    }
    setPolling(el, true);
    state.timers++;
    window.setTimeout(function () { refresh(el); }, POLL_MS);
  }

  function refresh(el) {
    state.timers--;
    if (!el.isConnected) return;
    var busy = document.activeElement && el.contains(document.activeElement) &&
      /^(INPUT|TEXTAREA)$/.test(document.activeElement.tagName);
    if (busy) { schedule(el); return; }  // never swap a form someone is typing in
    state.polls++;
    fetch(el.getAttribute("data-poll-url"), { credentials: "same-origin", redirect: "error" })
      .then(function (resp) {
        if (!resp.ok) throw new Error("HTTP " + resp.status);
        return resp.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById(el.id);
        if (!fresh) throw new Error("no #" + el.id + " in the answer");
        var node = document.importNode(fresh, true);
        el.replaceWith(node);
        localize(node);
        schedule(node);
      })
      .catch(function () { setPolling(el, false); });  // signed out or offline: stop quietly
  }

  function start() {
    localize(document);
    var live = document.querySelectorAll("[data-poll-url]");
    for (var i = 0; i < live.length; i++) schedule(live[i]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
