// hfvet dashboard: copy buttons and vet progress. Every page works without this script.
"use strict";

document.addEventListener("click", (event) => {
  const button = event.target.closest("button.copy");
  if (!button || !navigator.clipboard) return;
  navigator.clipboard.writeText(button.dataset.copy).then(() => {
    const label = button.textContent;
    button.classList.add("copied");
    button.textContent = "Copied";
    setTimeout(() => { button.classList.remove("copied"); button.textContent = label; }, 1500);
  });
});

// The job page: ask for the job's state every 1.5 s; once it is finished, load the page again, so the
// server shows the verdict, its badge and links exactly as a visitor without JavaScript sees them.
const job = document.querySelector("[data-testid=job-status][data-poll]");
if (job && job.dataset.poll) {
  const poll = () => fetch(job.dataset.poll, { credentials: "same-origin" })
    .then((response) => response.json())
    .then((state) => {
      if (state.finished) { window.location.reload(); return; }
      job.dataset.status = state.status;
      const badge = job.querySelector(".status");
      badge.textContent = state.status;
      badge.className = `badge status ${state.status}`;
      setTimeout(poll, 1500);
    })
    .catch(() => setTimeout(poll, 5000));
  setTimeout(poll, 1500);
}
