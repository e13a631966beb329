/* Compression tab: tell the cockpit the name and size of a file chosen for upload, before the
   browser reads it. The upload box refuses a file over the limit (max_size) without any event,
   so the tab shows its message from this store instead (gui/pages/compression/callbacks.py). */
(function () {
  var BOX = "#compress-file-upload", STORE = "compress-upload-picked";

  function report(files) {
    var api = window.dash_clientside;
    if (!files || !files.length || !api || !api.set_props) {
      return;
    }
    api.set_props(STORE, {data: {name: files[0].name, size: files[0].size, t: Date.now()}});
  }

  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t && t.type === "file" && t.closest && t.closest(BOX)) {
      report(t.files);
    }
  }, true);
  document.addEventListener("drop", function (e) {
    var t = e.target;
    if (t && t.closest && t.closest(BOX) && e.dataTransfer) {
      report(e.dataTransfer.files);
    }
  }, true);
})();
