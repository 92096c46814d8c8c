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
  var stopped = false;
  // A 4xx will not change by asking again (the job is gone, or not this person's): the
  // poll stops and says so; a 5xx or a lost connection is retried.
  function stop(answer) {
    stopped = true;
    var message = document.createElement("p");
    message.id = "job-poll-stopped";
    message.className = "alert";
    message.setAttribute("role", "alert");
    message.textContent = answer.status === 404
      ? "This conversion can no longer be found (it may have been removed), so its " +
        "progress is no longer shown. Reload the page or convert another picture."
      : "The progress of this conversion can no longer be checked (the server answered " +
        answer.status + "). Reload the page to try again.";
    section.appendChild(message);
  }
  function poll() {
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
      .then(function (answer) {
        if (answer.status === 401) { window.location.href = "/signin"; return null; }
        if (answer.status >= 400 && answer.status < 500) { stop(answer); return null; }
        return answer.ok ? answer.json() : null;
      })
      .then(function (job) {
        if (stopped) { return; }
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

// Download through fetch, so the file can also be shown on the page (SVG and PNG); any
// refusal (the daily quota, say) is shown by sending the form as a plain one.
function downloadWithPreview() {
  document.querySelectorAll("form[data-preview-into]").forEach(function (form) {
    var figure = document.getElementById(form.getAttribute("data-preview-into"));
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = form.querySelector("button");
      button.disabled = true;
      fetch(form.action, {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        credentials: "same-origin"
      })
        .then(function (answer) {
          var type = answer.headers.get("Content-Type") || "";
          if (!answer.ok || type.indexOf("image/") !== 0) { throw new Error("refused"); }
          var disposition = answer.headers.get("Content-Disposition") || "";
          var name = (/filename="([^"]+)"/.exec(disposition) || [null, "result"])[1];
          return answer.blob().then(function (blob) { return { blob: blob, name: name }; });
        })
        .then(function (file) {
          var url = URL.createObjectURL(file.blob);
          var save = document.createElement("a");
          save.href = url;
          save.download = file.name;
          document.body.appendChild(save);
          save.click();
          save.remove();
          figure.querySelector("img").src = url;
          figure.hidden = false;
          button.disabled = false;
        })
        .catch(function () { form.submit(); });
    });
  });
}

document.addEventListener("DOMContentLoaded", function () {
  copyButtons();
  converter();
  jobProgress();
  downloadWithPreview();
});
