"""Hub-style error responses: the client maps them to exception classes by ``X-Error-Code``."""

from __future__ import annotations

from starlette.responses import JSONResponse, Response


class HubHTTPError(Exception):
    def __init__(self, status: int, code: str | None, message: str, commit: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.commit = commit

    def response(self) -> Response:
        headers = {"X-Error-Message": self.message}
        if self.code:
            headers["X-Error-Code"] = self.code
        if self.commit:
            headers["X-Repo-Commit"] = self.commit  # lets the client cache "file absent at this commit"
        return JSONResponse({"error": self.message}, status_code=self.status, headers=headers)


def repo_not_found(repo_id: str, token_sent: bool) -> HubHTTPError:
    # Like the Hub: private repos look exactly like missing ones.
    return HubHTTPError(404 if token_sent else 401, "RepoNotFound", f"Repository not found: {repo_id}")


def revision_not_found(revision: str) -> HubHTTPError:
    return HubHTTPError(404, "RevisionNotFound", f"Invalid rev id: {revision}")


def entry_not_found(path: str, commit: str) -> HubHTTPError:
    return HubHTTPError(404, "EntryNotFound", f"Entry not found: {path}", commit=commit)


def gated(repo_id: str, token_sent: bool) -> HubHTTPError:
    message = f"Access to model {repo_id} is restricted. You must have access to it and be authenticated."
    return HubHTTPError(403 if token_sent else 401, "GatedRepo", message)


def disabled() -> HubHTTPError:
    return HubHTTPError(403, None, "Access to this resource is disabled.")


def bad_request(message: str) -> HubHTTPError:
    return HubHTTPError(400, None, message)


def not_found() -> HubHTTPError:
    return HubHTTPError(404, None, "Not found")
