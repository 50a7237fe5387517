#!/usr/bin/env python3
"""Create or update syncguard's comments on a pull request (GitHub) or merge request (GitLab).

`syncguard review --output markdown=comment.md` writes the review as one comment, or, when it is
longer than a comment may be, as parts: comment.md, comment.2.md, ... Each part's first line is its
marker: `<!-- syncguard-review -->` for a review in one comment, `<!-- syncguard-review part K of N -->`
for part K of N. Pass the first file; the others are read beside it (part 1 says how many there are).

Existing comments are found by their markers (a comment of an earlier syncguard with the plain marker
is part 1): each part is updated in place, the missing ones are created after them, in order, and the
parts an earlier, longer review left (and any duplicate) are deleted, so a pull request always shows
exactly the current review, never a comment per push.

    upsert-comment.py --provider github --body comment.md
        GITHUB_API_URL (default https://api.github.com), GITHUB_REPOSITORY (owner/name),
        PR number from --number or GITHUB_EVENT_PATH's pull_request.number, token from
        GITHUB_TOKEN.
    upsert-comment.py --provider gitlab --body comment.md
        CI_API_V4_URL, CI_PROJECT_ID, CI_MERGE_REQUEST_IID (or --number), token from
        SYNCGUARD_GITLAB_TOKEN (a project or personal access token with the api scope; the job
        token cannot write notes).

Exit codes: 0 posted or updated, 2 missing configuration, a missing part or an API error (the
message says which request failed and what the API answered). Only the Python standard library is
used.
"""

import argparse
import json
import os
import re
import sys
import urllib.error
import urllib.request

MARKER = "<!-- syncguard-review -->"
PART = re.compile(r"<!-- syncguard-review(?: part ([0-9]+) of ([0-9]+))? -->")
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

    def delete(self, comment_id):
        request("DELETE", f"{self.api}/repos/{self.repo}/issues/comments/{comment_id}", self.headers)


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
            # Oldest first, as GitHub lists comments: parts are kept in the order they were posted.
            url = f"{self.base()}?sort=asc&order_by=created_at&per_page={PER_PAGE}&page={page}"
            batch = request("GET", url, self.headers) or []
            yield from ((n["id"], n.get("body") or "") for n in batch)
            if len(batch) < PER_PAGE:
                return

    def update(self, comment_id, body):
        request("PUT", f"{self.base()}/{comment_id}", self.headers, {"body": body})

    def create(self, body):
        request("POST", self.base(), self.headers, {"body": body})

    def delete(self, comment_id):
        request("DELETE", f"{self.base()}/{comment_id}", self.headers)


def part_of(text):
    """(K, N) of a syncguard comment (part K of N; (1, 1) for a review in one comment), else None."""
    m = PART.match(text)
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2))) if m.group(1) else (1, 1)


def part_path(first, k):
    """Where syncguard review wrote part K beside the first part: comment.md -> comment.K.md."""
    root, ext = os.path.splitext(first)
    return f"{root}.{k}{ext}"


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e}")


def read_parts(first):
    """The bodies of every part, the first read from FIRST, each checked against its marker."""
    body = read(first)
    found = part_of(body)
    if found is None:
        fail(f"{first} does not start with {MARKER}: not a syncguard review comment")
    k, n = found
    if k != 1:
        fail(f"{first} is part {k} of {n}; pass the first part (the file of --output markdown=FILE)")
    bodies = [body]
    for k in range(2, n + 1):
        path = part_path(first, k)
        if not os.path.exists(path):
            fail(f"{first} is part 1 of {n} but {path} is missing: pass the files one syncguard review run wrote")
        text = read(path)
        if part_of(text) != (k, n):
            fail(f"{path} is not part {k} of {n} (its first line: {text.splitlines()[0] if text else ''!r})")
        bodies.append(text)
    return bodies


def plan(existing, n):
    """What to do with the syncguard comments EXISTING ([(part, id)] in posting order) for a review of
    N parts: ({part: id} to update, [parts] to create, [ids] to delete). The parts kept are the longest
    run 1, 2, ... found in posting order, so the parts read in order once the missing ones are created
    after them; everything else of syncguard's is deleted."""
    update = {}
    at = -1
    for k in range(1, n + 1):
        nxt = next((i for i, (part, _) in enumerate(existing) if part == k and i > at), None)
        if nxt is None:
            break
        update[k] = existing[nxt][1]
        at = nxt
    create = [k for k in range(1, n + 1) if k not in update]
    kept = set(update.values())
    delete = [cid for _, cid in existing if cid not in kept]
    return update, create, delete


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--provider", choices=["github", "gitlab"], required=True)
    parser.add_argument("--body", required=True, help="the first (or only) Markdown file syncguard review wrote")
    parser.add_argument("--number", help="pull request number / merge request IID")
    args = parser.parse_args()
    bodies = read_parts(args.body)
    api = GitHub(args.number) if args.provider == "github" else GitLab(args.number)
    existing = [(found[0], cid) for cid, text in api.comments() if (found := part_of(text)) is not None]
    update, create, delete = plan(existing, len(bodies))
    n = len(bodies)
    for k, cid in update.items():
        api.update(cid, bodies[k - 1])
        print(f"upsert-comment: updated comment {cid} (part {k} of {n})")
    for k in create:
        api.create(bodies[k - 1])
        print(f"upsert-comment: created the syncguard comment (part {k} of {n})")
    for cid in delete:
        api.delete(cid)
        print(f"upsert-comment: deleted comment {cid}, left by an earlier review")


if __name__ == "__main__":
    main()
