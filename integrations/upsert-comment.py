#!/usr/bin/env python3
"""Create or update syncguard's one comment on a pull request (GitHub) or merge request (GitLab).

The comment is found by the marker its first line carries (`<!-- syncguard-review -->`, written by
`syncguard review --format markdown`): an existing one is updated in place, otherwise one is
created, so a pull request never collects a comment per push.

    upsert-comment.py --provider github --body comment.md
        GITHUB_API_URL (default https://api.github.com), GITHUB_REPOSITORY (owner/name),
        PR number from --number or GITHUB_EVENT_PATH's pull_request.number, token from
        GITHUB_TOKEN.
    upsert-comment.py --provider gitlab --body comment.md
        CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID (or --number), token from
        SYNCGUARD_GITLAB_TOKEN (a project or personal access token with the api scope; the job
        token cannot write notes).

Exit codes: 0 posted or updated, 2 missing configuration or an API error (the message says which
request failed and what the API answered). Only the Python standard library is used.
"""

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

MARKER = "<!-- syncguard-review -->"
PER_PAGE = 100
MAX_PAGES = 50


def fail(message):
    print(f"upsert-comment: {message}", file=sys.stderr)
    sys.exit(2)


def request(method, url, headers, payload=None):
    data = None if payload is None else json.dumps(payload).encode()
    req = urllib.request.Request(url, data=data, method=method)
    for key, value in headers.items():
        req.add_header(key, value)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = resp.read()
    except urllib.error.HTTPError as e:
        detail = e.read().decode(errors="replace")[:500]
        fail(f"{method} {url}: HTTP {e.code}: {detail}")
    except urllib.error.URLError as e:
        fail(f"{method} {url}: {e.reason}")
    return json.loads(body) if body else None


class GitHub:
    def __init__(self, number):
        self.api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        self.repo = os.environ.get("GITHUB_REPOSITORY") or fail("GITHUB_REPOSITORY is not set")
        token = os.environ.get("GITHUB_TOKEN") or fail("GITHUB_TOKEN is not set")
        self.number = number or self.event_number()
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }

    @staticmethod
    def event_number():
        path = os.environ.get("GITHUB_EVENT_PATH")
        if not path:
            fail("no --number and no GITHUB_EVENT_PATH: which pull request?")
        with open(path, encoding="utf-8") as f:
            event = json.load(f)
        number = (event.get("pull_request") or {}).get("number")
        if not number:
            fail(f"{path} is not a pull_request event; pass --number")
        return number

    def comments(self):
        for page in range(1, MAX_PAGES + 1):
            url = f"{self.api}/repos/{self.repo}/issues/{self.number}/comments?per_page={PER_PAGE}&page={page}"
            batch = request("GET", url, self.headers) or []
            yield from ((c["id"], c.get("body") or "") for c in batch)
            if len(batch) < PER_PAGE:
                return

    def update(self, comment_id, body):
        request("PATCH", f"{self.api}/repos/{self.repo}/issues/comments/{comment_id}", self.headers, {"body": body})

    def create(self, body):
        request("POST", f"{self.api}/repos/{self.repo}/issues/{self.number}/comments", self.headers, {"body": body})


class GitLab:
    def __init__(self, number):
        self.api = (os.environ.get("CI_API_V4_URL") or fail("CI_API_V4_URL is not set")).rstrip("/")
        self.project = os.environ.get("CI_PROJECT_ID") or fail("CI_PROJECT_ID is not set")
        self.number = number or os.environ.get("CI_MERGE_REQUEST_IID") or fail(
            "no --number and no CI_MERGE_REQUEST_IID: run in a merge request pipeline"
        )
        token = os.environ.get("SYNCGUARD_GITLAB_TOKEN") or fail(
            "SYNCGUARD_GITLAB_TOKEN is not set (a token with the api scope)"
        )
        self.headers = {"PRIVATE-TOKEN": token}

    def base(self):
        return f"{self.api}/projects/{self.project}/merge_requests/{self.number}/notes"

    def comments(self):
        for page in range(1, MAX_PAGES + 1):
            batch = request("GET", f"{self.base()}?per_page={PER_PAGE}&page={page}", self.headers) or []
            yield from ((n["id"], n.get("body") or "") for n in batch)
            if len(batch) < PER_PAGE:
                return

    def update(self, comment_id, body):
        request("PUT", f"{self.base()}/{comment_id}", self.headers, {"body": body})

    def create(self, body):
        request("POST", self.base(), self.headers, {"body": body})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--provider", choices=["github", "gitlab"], required=True)
    parser.add_argument("--body", required=True, help="the Markdown file syncguard review wrote")
    parser.add_argument("--number", help="pull request number / merge request IID")
    args = parser.parse_args()
    try:
        with open(args.body, encoding="utf-8") as f:
            body = f.read()
    except OSError as e:
        fail(f"cannot read {args.body}: {e}")
    if not body.startswith(MARKER):
        fail(f"{args.body} does not start with {MARKER}: not a syncguard review comment")
    api = GitHub(args.number) if args.provider == "github" else GitLab(args.number)
    existing = next((cid for cid, text in api.comments() if text.startswith(MARKER)), None)
    if existing is None:
        api.create(body)
        print("upsert-comment: created the syncguard comment")
    else:
        api.update(existing, body)
        print(f"upsert-comment: updated comment {existing}")


if __name__ == "__main__":
    main()
