//! Files a source names (Helm value files and file parameters) resolved as Argo CD resolves them
//! (`ResolveValueFilePathOrUrl` and `getResolvedRefValueFile`): `$ref/...` in the referenced
//! source's checkout, an allowed URL as it is, `/x` from the repository root, anything else from
//! the source's directory — and nothing may leave its repository.

use std::path::{Component, Path, PathBuf};

use globset::GlobBuilder;

use super::SourceCtx;

/// URL schemes Argo CD passes to Helm as they are (argocd-cm `helm.valuesFileSchemes` default).
const ALLOWED_SCHEMES: [&str; 2] = ["https", "http"];

/// A resolved file reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A file (or a glob pattern) on this machine, absolute.
    Local(PathBuf),
    /// A remote file Helm fetches itself.
    Url(String),
}

/// Resolves `raw` (a value file or file parameter path as written on the source).
pub fn resolve(ctx: &SourceCtx<'_>, raw: &str) -> Result<Resolved, String> {
    if ctx.multi_source
        && let Some(stripped) = raw.strip_prefix('$')
    {
        let (name, rest) = stripped.split_once('/').unwrap_or((stripped, ""));
        let key = format!("${name}");
        let Some(root) = ctx.refs.iter().find(|(k, _)| *k == key).map(|(_, d)| d) else {
            return Err(unknown_ref(ctx, &key));
        };
        let Some(root) = root else {
            return Err(format!(
                "{raw}: the source {key} is not a local repository (map it with --repo URL=DIR)"
            ));
        };
        let rest = ctx.env.substitute(rest);
        return inside(root, &root.join(rest.trim_start_matches('/')), raw).map(Resolved::Local);
    }
    let value = ctx.env.substitute(raw);
    if let Some(scheme) = url_scheme(&value) {
        if ALLOWED_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
            return Ok(Resolved::Url(value));
        }
        return Err(format!(
            "{raw}: the URL scheme '{scheme}' is not allowed (argocd-cm helm.valuesFileSchemes)"
        ));
    }
    let joined = match value.strip_prefix('/') {
        Some(from_root) => ctx.root.join(from_root),
        None => ctx.app_dir.join(&value),
    };
    inside(ctx.root, &joined, raw).map(Resolved::Local)
}

fn unknown_ref(ctx: &SourceCtx<'_>, key: &str) -> String {
    if ctx.refs.is_empty() {
        return format!("source referenced {key:?}, but no source has a 'ref' field defined");
    }
    let names: Vec<&str> = ctx.refs.iter().map(|(k, _)| k.as_str()).collect();
    format!(
        "source referenced {key:?}, which is not one of the available sources ({})",
        names.join(", ")
    )
}

/// A scheme (`https` of `https://...`) when `value` is a URL.
fn url_scheme(value: &str) -> Option<&str> {
    let (scheme, _) = value.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// `path` with `.` and `..` removed lexically, refused when it leaves `root` (by its text, or
/// through a symbolic link when it exists).
pub(super) fn inside(root: &Path, path: &Path, raw: &str) -> Result<PathBuf, String> {
    let mut clean = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    let leaves = || format!("{raw}: resolves outside the repository, which Argo CD refuses");
    if !clean.starts_with(root) {
        return Err(leaves());
    }
    if let (Ok(real), Ok(real_root)) = (std::fs::canonicalize(&clean), std::fs::canonicalize(root))
        && !real.starts_with(&real_root)
    {
        return Err(leaves());
    }
    Ok(clean)
}

/// The path holds a glob (`*`, `?`, `[`).
pub fn is_glob(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '['])
}

/// The files matching `pattern` (absolute, doublestar syntax: `*` stays within a directory,
/// `**` crosses them), in lexical order; a match that leaves the repository is an error.
pub fn glob(ctx: &SourceCtx<'_>, pattern: &Path) -> Result<Vec<PathBuf>, String> {
    let text = pattern.to_string_lossy();
    let matcher = GlobBuilder::new(&text)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("values file glob {text}: {e}"))?
        .compile_matcher();
    let base: PathBuf = pattern
        .components()
        .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
        .collect();
    let mut files = Vec::new();
    walk_files(&base, &mut files);
    let mut out: Vec<PathBuf> = files.into_iter().filter(|f| matcher.is_match(f)).collect();
    out.sort();
    for m in &out {
        inside(ctx.root, m, &m.to_string_lossy())?;
    }
    Ok(out)
}

fn walk_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            walk_files(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

/// Copies the tree at `from` to `to` (which must not exist), leaving out `.git`; symbolic links
/// are copied as links.
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let err = |p: &Path, e: std::io::Error| format!("copying {}: {e}", p.display());
    std::fs::create_dir_all(to).map_err(|e| err(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| err(from, e))? {
        let entry = entry.map_err(|e| err(from, e))?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type().map_err(|e| err(&src, e))?;
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(|e| err(&src, e))?;
            #[cfg(unix)]
            std::os::unix::fs::symlink(&target, &dst).map_err(|e| err(&dst, e))?;
            #[cfg(not(unix))]
            std::fs::copy(&src, &dst)
                .map(|_| ())
                .map_err(|e| err(&dst, e))?;
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| err(&src, e))?;
        }
    }
    Ok(())
}
