// Keeps the page current: the server pushes the re-rendered view when the
// queues or workloads change (server-sent events; the browser reconnects
// by itself). No polling.
(function () {
  var live = document.getElementById("live");
  var source = new EventSource("events");
  source.onmessage = function (e) {
    document.getElementById("view").innerHTML = e.data;
    live.textContent = "live";
    live.className = "";
  };
  source.onerror = function () {
    live.textContent = "reconnecting";
    live.className = "stale";
  };
})();
