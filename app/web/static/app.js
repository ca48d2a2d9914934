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

// The job page: ask for the job's state every 1.5 s until it is finished, then show the verdict.
const job = document.querySelector("[data-testid=job-status][data-poll]");
if (job && job.dataset.poll) {
  const poll = () => fetch(job.dataset.poll, { credentials: "same-origin" })
    .then((response) => response.json())
    .then((state) => {
      job.dataset.status = state.status;
      job.querySelector(".status").textContent = state.status;
      if (!state.finished) { setTimeout(poll, 1500); return; }
      if (state.error) {
        const p = document.createElement("p");
        p.className = "problem";
        p.textContent = state.error;
        job.appendChild(p);
      }
      if (state.verdict) {
        const result = job.querySelector(".result");
        result.textContent = `Verdict: ${state.approved ? "approved" : state.verdict} — `;
        const link = document.createElement("a");
        link.href = state.repo_url;
        link.textContent = "see the report";
        result.appendChild(link);
      }
    })
    .catch(() => setTimeout(poll, 5000));
  setTimeout(poll, 1500);
}
