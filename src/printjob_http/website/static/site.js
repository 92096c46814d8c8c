// printjob website: small enhancements over plain forms (everything works without them).
"use strict";

function copyButtons() {
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.getAttribute("data-copy"));
      var note = document.querySelector("[data-copied-for='" + field.id + "']");
      field.select();
      var done = function () { if (note) { note.textContent = "Copied."; } };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          document.execCommand("copy"); done();
        });
      } else {
        document.execCommand("copy");
        done();
      }
    });
  });
}

function converter() {
  var input = document.getElementById("image");
  var zone = document.getElementById("drop");
  if (!input || !zone) { return; }
  var preview = document.getElementById("original-preview");
  var chosen = document.getElementById("chosen-name");
  var shown = null;
  function show() {
    var file = input.files && input.files[0];
    if (shown) { URL.revokeObjectURL(shown); shown = null; }
    if (!file) { chosen.textContent = "nothing yet"; preview.hidden = true; return; }
    chosen.textContent = file.name || "pasted picture";  // text, never markup
    shown = URL.createObjectURL(file);
    preview.src = shown;
    preview.hidden = false;
  }
  function take(files) {
    if (!files || !files.length) { return false; }
    var transfer = new DataTransfer();
    transfer.items.add(files[0]);
    input.files = transfer.files;
    show();
    return true;
  }
  input.addEventListener("change", show);
  zone.addEventListener("dragover", function (event) {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", function () { zone.classList.remove("over"); });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("over");
    take(event.dataTransfer && event.dataTransfer.files);
  });
  document.addEventListener("paste", function (event) {
    if (take(event.clipboardData && event.clipboardData.files)) { event.preventDefault(); }
  });
}

function jobProgress() {
  var section = document.getElementById("job");
  if (!section || section.getAttribute("data-final") === "true") { return; }
  var url = section.getAttribute("data-status-url");
  var status = document.getElementById("job-status");
  var phase = document.getElementById("job-phase");
  var bar = document.getElementById("job-progress");
  var percent = document.getElementById("job-percent");
  function poll() {
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (answer) {
        if (answer.status === 401) { window.location.href = "/signin"; return null; }
        return answer.ok ? answer.json() : null;
      })
      .then(function (job) {
        if (!job) { window.setTimeout(poll, 3000); return; }
        status.textContent = job.status;
        status.className = "status status-" + job.status;
        phase.textContent = job.phase || "";
        var value = job.progress || 0;
        bar.value = value;
        bar.textContent = value + "%";
        percent.textContent = value + "%";
        if (job.finished) { window.location.reload(); return; }
        window.setTimeout(poll, 700);
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  window.setTimeout(poll, 300);
}

document.addEventListener("DOMContentLoaded", function () {
  copyButtons();
  converter();
  jobProgress();
});
