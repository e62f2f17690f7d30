// Live updates of a running investigation on its trace page: the trace events arrive over the existing
// Server-Sent Events stream (same-origin, the session cookie authenticates it); when it ends the page
// reloads with the full summary. Text is only ever inserted with textContent.
(function () {
  "use strict";
  var root = document.querySelector("[data-live]");
  if (!root || !window.EventSource) { return; }
  var list = document.getElementById("live-events");
  var status = document.getElementById("live-status");
  var source = new EventSource("/v1/investigations/" + encodeURIComponent(root.getAttribute("data-live")) + "/events");

  function describe(ev) {
    var d = ev.data || {};
    if (ev.kind === "route") { return "route: " + d.route + " (" + (d.reason || "") + ")"; }
    if (ev.kind === "hop") { return "hop " + ev.hop + ": searching " + (d.queries || []).join(" | "); }
    if (ev.kind === "retrieval") { return "hop " + ev.hop + ": " + d.engine + " found " + (d.ids || []).length + (d.error ? " (" + d.error + ")" : ""); }
    if (ev.kind === "decision") { return "hop " + ev.hop + ": " + d.action + " (" + d.reason + ")"; }
    if (ev.kind === "synthesis") { return "answer written (" + d.status + ")"; }
    if (ev.kind === "stop") { return "stopped: " + d.reason; }
    return ev.kind;
  }

  source.addEventListener("trace", function (message) {
    var item = document.createElement("li");
    item.textContent = describe(JSON.parse(message.data));
    list.appendChild(item);
  });
  source.addEventListener("end", function () {
    source.close();
    if (status) { status.textContent = "Finished: loading the summary…"; }
    window.location.reload();
  });
  source.onerror = function () {
    if (status) { status.textContent = "Live updates interrupted; reload the page to see the latest state."; }
  };
}());
