//! The model cache, `ENGRAM_HOME/models/<name>/`, and downloads from the Hugging Face hub.
//!
//! A model folder is either complete (all of [`MODEL_FILES`], `checksums.txt` and
//! `engram-model.json`) or absent: [`pull`] builds it under a hidden temporary name in the
//! same directory and renames it into place, so an interrupted download never leaves a
//! half-written model that would later load.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use hf_hub::api::Progress;
use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Cache, Repo, RepoType};

use crate::MODEL_FILES;
use crate::checksum::{verify_checksums, write_checksums};
use crate::error::Error;
use crate::spec::{FOLDER_SPEC_FILE, ModelSpec};

/// Where downloads go when the caller passes no endpoint (`HF_ENDPOINT` unset).
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Prefix of the temporary folders [`pull`] works in; [`list`] skips them.
const STAGING_PREFIX: &str = ".pull-";

/// Whether `dir` holds the three files a model needs (it does not verify them).
pub fn installed(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|f| dir.join(f).is_file())
}

/// A model known to engram or found in the models directory.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    pub spec: ModelSpec,
    /// In the registry (it can be pulled by name).
    pub known: bool,
    /// Where its files are, or would be once pulled.
    pub path: PathBuf,
    pub installed: bool,
    /// Total size of the folder's files, 0 when not installed.
    pub size_bytes: u64,
}

/// The known models (installed or not) followed by any other model folder found in
/// `models_dir` (one holding a `config.json`), sorted by name. Does not verify checksums
/// (that reads every byte; loading does it).
pub fn list(models_dir: &Path) -> Result<Vec<ModelEntry>, Error> {
    let mut entries: Vec<ModelEntry> = ModelSpec::known()
        .into_iter()
        .map(|spec| {
            let path = models_dir.join(&spec.name);
            let installed = installed(&path);
            ModelEntry {
                size_bytes: if installed { folder_size(&path) } else { 0 },
                spec,
                known: true,
                path,
                installed,
            }
        })
        .collect();
    let read = match std::fs::read_dir(models_dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(entries),
        Err(e) => return Err(Error::io(models_dir, e)),
    };
    let mut others = Vec::new();
    for item in read {
        let item = item.map_err(|e| Error::io(models_dir, e))?;
        let path = item.path();
        let name = item.file_name().to_string_lossy().into_owned();
        let taken = entries.iter().any(|e| e.path == path);
        if name.starts_with('.') || taken || !path.join("config.json").is_file() {
            continue;
        }
        // A folder whose description is broken is still listed, under its folder name.
        let spec = ModelSpec::for_folder(&path).unwrap_or_else(|_| ModelSpec {
            name: name.clone(),
            repo: format!("local/{name}"),
            dim: 0,
            ..ModelSpec::default_model()
        });
        let installed = installed(&path);
        others.push(ModelEntry {
            size_bytes: if installed { folder_size(&path) } else { 0 },
            spec,
            known: false,
            path,
            installed,
        });
    }
    others.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    entries.extend(others);
    Ok(entries)
}

fn folder_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Finds the model `name_or_path` names, in this order: a known model (name, alias or
/// repo id) → `models_dir/<name>` ([`Error::NotInstalled`] if missing); a folder in
/// `models_dir`; a path to a model folder. Returns its spec and folder.
pub fn resolve(models_dir: &Path, name_or_path: &str) -> Result<(ModelSpec, PathBuf), Error> {
    if let Some(spec) = ModelSpec::find(name_or_path) {
        let dir = models_dir.join(&spec.name);
        if !installed(&dir) {
            return Err(Error::NotInstalled {
                name: spec.name,
                path: dir,
            });
        }
        // A pulled folder's own description (engram-model.json) wins over the registry.
        return Ok((ModelSpec::for_folder(&dir)?, dir));
    }
    let candidates = [models_dir.join(name_or_path), PathBuf::from(name_or_path)];
    for dir in candidates {
        if dir.join("config.json").is_file() {
            return Ok((ModelSpec::for_folder(&dir)?, dir));
        }
    }
    Err(Error::UnknownModel {
        name: name_or_path.to_string(),
        known: ModelSpec::known_names(),
    })
}

/// Progress of [`pull`], for a progress bar. Byte counts are per file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullEvent {
    /// The model is installed and its checksums hold; nothing was downloaded.
    AlreadyInstalled { path: PathBuf },
    /// A file download starts; `total_bytes` is what the server announced.
    FileStarted { file: String, total_bytes: u64 },
    /// More of the file arrived.
    FileProgress {
        file: String,
        done_bytes: u64,
        total_bytes: u64,
    },
    /// The file is complete.
    FileFinished { file: String },
    /// The files are being copied from a Hugging Face cache on this machine (no download).
    FromCache { path: PathBuf },
    /// The model folder is in place.
    Installed { path: PathBuf },
}

/// Bridges hf-hub's progress trait to the caller's callback.
struct ProgressAdapter<'a> {
    file: String,
    started: bool,
    done: u64,
    total: u64,
    callback: &'a mut dyn FnMut(PullEvent),
}

// By reference, so the announced size can be read after the download.
impl Progress for &mut ProgressAdapter<'_> {
    fn init(&mut self, size: usize, _filename: &str) {
        // hf-hub calls `init` again for every (resumed) request, each followed by an
        // `update` with the bytes already on disk: restart the count, report the start once.
        let first = !self.started;
        self.started = true;
        self.total = size as u64;
        self.done = 0;
        if first {
            (self.callback)(PullEvent::FileStarted {
                file: self.file.clone(),
                total_bytes: self.total,
            });
        }
    }

    fn update(&mut self, size: usize) {
        self.done += size as u64;
        (self.callback)(PullEvent::FileProgress {
            file: self.file.clone(),
            done_bytes: self.done,
            total_bytes: self.total,
        });
    }

    fn finish(&mut self) {}
}

/// A fresh staging folder for `spec` in `models_dir` (same filesystem as the target, so
/// the install is a rename), and the folder inside it the model's files go to.
fn stage(spec: &ModelSpec, models_dir: &Path) -> Result<(Staging, PathBuf), Error> {
    std::fs::create_dir_all(models_dir).map_err(|e| Error::io(models_dir, e))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let staging = Staging(models_dir.join(format!(
        "{STAGING_PREFIX}{}-{}-{nanos}",
        spec.name,
        std::process::id()
    )));
    let files_dir = staging.0.join("model");
    std::fs::create_dir_all(&files_dir).map_err(|e| Error::io(&files_dir, e))?;
    Ok((staging, files_dir))
}

/// Removes the staging folder however [`pull`] ends.
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Downloads `spec`'s `config.json`, `tokenizer.json` and `model.safetensors` from the
/// Hugging Face hub into `models_dir/<spec.name>/`, records their sha256 in
/// `checksums.txt` and the spec in `engram-model.json`, and returns the folder.
///
/// `endpoint` is the hub's base URL: the binary passes `HF_ENDPOINT` (a mirror) when set,
/// `None` means [`DEFAULT_ENDPOINT`]. Nothing appears under the final name until every file
/// is complete; on any error the temporary folder is removed and an installed copy, if
/// any, is untouched. A model that is already installed with valid checksums is not
/// downloaded again (delete its folder to force it); one that fails verification is
/// replaced.
pub fn pull(
    spec: &ModelSpec,
    models_dir: &Path,
    endpoint: Option<&str>,
    progress: &mut dyn FnMut(PullEvent),
) -> Result<PathBuf, Error> {
    let target = models_dir.join(&spec.name);
    if installed(&target) && verify_checksums(&target).is_ok_and(|n| n > 0) {
        progress(PullEvent::AlreadyInstalled {
            path: target.clone(),
        });
        return Ok(target);
    }
    let (staging, files_dir) = stage(spec, models_dir)?;

    let endpoint = endpoint
        .unwrap_or(DEFAULT_ENDPOINT)
        .trim_end_matches('/')
        .to_string();
    // hf-hub's own cache is used only as scratch space inside the staging folder, so the
    // user's ~/.cache/huggingface is neither read nor filled (nor its token used).
    let api = ApiBuilder::from_cache(Cache::new(staging.0.join("hub")))
        .with_endpoint(endpoint)
        .with_progress(false)
        .with_retries(2)
        .with_user_agent("engram", env!("CARGO_PKG_VERSION"))
        .build()
        .map_err(|e| Error::Download {
            url: DEFAULT_ENDPOINT.to_string(),
            message: format!("cannot start the HTTP client: {e}"),
        })?;
    let repo = api.repo(Repo::with_revision(
        spec.repo.clone(),
        RepoType::Model,
        spec.revision.clone(),
    ));

    for file in MODEL_FILES {
        let url = repo.url(file);
        let mut adapter = ProgressAdapter {
            file: file.to_string(),
            started: false,
            done: 0,
            total: 0,
            callback: &mut *progress,
        };
        // hf-hub 0.5 has a few `expect`s on malformed server replies; a bad mirror must
        // give an error, not take the process down.
        let got = catch_unwind(AssertUnwindSafe(|| {
            repo.download_with_progress(file, &mut adapter)
        }));
        let expected = adapter.total;
        let downloaded = match got {
            Ok(Ok(path)) => path,
            Ok(Err(e)) => {
                return Err(Error::Download {
                    url,
                    message: describe_hub_error(&e),
                });
            }
            Err(_) => {
                return Err(Error::Download {
                    url,
                    message: "the server's reply could not be understood".into(),
                });
            }
        };
        let dest = files_dir.join(file);
        // The cache entry is a symlink to a blob; move the blob itself (same filesystem).
        let blob = std::fs::canonicalize(&downloaded).map_err(|e| Error::io(&downloaded, e))?;
        std::fs::rename(&blob, &dest).map_err(|e| Error::io(&dest, e))?;
        let size = std::fs::metadata(&dest)
            .map_err(|e| Error::io(&dest, e))?
            .len();
        if size != expected {
            return Err(Error::Download {
                url,
                message: format!("received {size} bytes, the server announced {expected}"),
            });
        }
        progress(PullEvent::FileFinished {
            file: file.to_string(),
        });
    }

    install_staged(spec, &staging, &files_dir, &target, progress)
}

/// Checks the files staged in `files_dir`, records their checksums and the spec, and swaps
/// them in at `target` (an old copy there is moved aside and deleted with the staging
/// folder).
fn install_staged(
    spec: &ModelSpec,
    staging: &Staging,
    files_dir: &Path,
    target: &Path,
    progress: &mut dyn FnMut(PullEvent),
) -> Result<PathBuf, Error> {
    // Catch an HTML error page or a non-BERT repo before it is installed.
    let got = ModelSpec::for_folder(files_dir)?;
    if got.dim != spec.dim {
        return Err(Error::invalid(
            files_dir.join("config.json"),
            format!(
                "hidden_size is {}, but {} should have {}",
                got.dim, spec.name, spec.dim
            ),
        ));
    }
    write_checksums(files_dir, &MODEL_FILES)?;
    let spec_path = files_dir.join(FOLDER_SPEC_FILE);
    std::fs::write(&spec_path, spec.to_folder_json()).map_err(|e| Error::io(&spec_path, e))?;

    // Swap in: move a broken old copy aside (it is deleted with the staging folder).
    let old = staging.0.join("old");
    let had_old = target.exists();
    if had_old {
        std::fs::rename(target, &old).map_err(|e| Error::io(target, e))?;
    }
    if let Err(e) = std::fs::rename(files_dir, target) {
        if had_old {
            let _ = std::fs::rename(&old, target);
        }
        return Err(Error::io(target, e));
    }
    progress(PullEvent::Installed {
        path: target.to_path_buf(),
    });
    Ok(target.to_path_buf())
}

/// The snapshot of `spec`'s repository in a Hugging Face hub cache folder (the layout
/// `huggingface_hub` and sentence-transformers write: `models--org--name/snapshots/<rev>/`)
/// that holds all of [`MODEL_FILES`]: the pinned revision's when it is there, else the
/// most recently written one. `None` when the cache has no complete snapshot.
pub fn find_in_hub_cache(cache: &Path, spec: &ModelSpec) -> Option<PathBuf> {
    let snapshots = cache
        .join(format!("models--{}", spec.repo.replace('/', "--")))
        .join("snapshots");
    let pinned = snapshots.join(&spec.revision);
    if installed(&pinned) {
        return Some(pinned);
    }
    let mut found: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(&snapshots)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| installed(p))
        .map(|p| {
            let at = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .unwrap_or(UNIX_EPOCH);
            (at, p)
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

/// Installs `spec` from the first of `caches` (Hugging Face hub cache folders on this
/// machine, see [`find_in_hub_cache`]) that holds it, with no download: the files are
/// copied (the cache is left as it was), checked as a download is, and installed as
/// [`pull`] installs. `Ok(None)` when no cache holds the model or it is already installed
/// with valid checksums (`pull` then says so).
pub fn install_from_hub_cache(
    spec: &ModelSpec,
    models_dir: &Path,
    caches: &[PathBuf],
    progress: &mut dyn FnMut(PullEvent),
) -> Result<Option<PathBuf>, Error> {
    let target = models_dir.join(&spec.name);
    if installed(&target) && verify_checksums(&target).is_ok_and(|n| n > 0) {
        return Ok(None);
    }
    let Some(source) = caches.iter().find_map(|c| find_in_hub_cache(c, spec)) else {
        return Ok(None);
    };
    let (staging, files_dir) = stage(spec, models_dir)?;
    progress(PullEvent::FromCache {
        path: source.clone(),
    });
    for file in MODEL_FILES {
        // `copy` follows the snapshot's symlinks to the blobs.
        std::fs::copy(source.join(file), files_dir.join(file))
            .map_err(|e| Error::io(source.join(file), e))?;
    }
    install_staged(spec, &staging, &files_dir, &target, progress).map(Some)
}

/// hf-hub's messages name no cause a user can act on ("request error: io: Connection
/// refused"); add the likely one.
fn describe_hub_error(e: &hf_hub::api::sync::ApiError) -> String {
    use hf_hub::api::sync::ApiError;
    let text = e.to_string();
    let hint = match e {
        ApiError::RequestError(_) | ApiError::TooManyRetries(_) => {
            if text.contains("404") {
                " (no such repo, revision or file)"
            } else if text.contains("401") || text.contains("403") {
                " (the repo is private or gated)"
            } else {
                " (is the network up, and HF_ENDPOINT right if set?)"
            }
        }
        ApiError::MissingHeader(_) | ApiError::InvalidHeader(_) => {
            " (the server does not behave like the Hugging Face hub; check HF_ENDPOINT)"
        }
        _ => "",
    };
    format!("{text}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_model(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("config.json"), r#"{"hidden_size": 384}"#).unwrap();
        std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
        std::fs::write(dir.join("model.safetensors"), "x").unwrap();
    }

    #[test]
    fn list_shows_known_models_and_local_folders() {
        let root = tempfile::tempdir().unwrap();
        let none = list(&root.path().join("missing")).unwrap();
        assert_eq!(none.len(), ModelSpec::known().len());
        assert!(none.iter().all(|e| e.known && !e.installed));

        fake_model(&root.path().join("all-MiniLM-L6-v2"));
        fake_model(&root.path().join("my-model"));
        std::fs::create_dir_all(root.path().join(".pull-x-1-2/model")).unwrap();
        let all = list(root.path()).unwrap();
        let mini = all
            .iter()
            .find(|e| e.spec.name == "all-MiniLM-L6-v2")
            .unwrap();
        assert!(mini.installed && mini.known && mini.size_bytes > 0);
        let mine = all.iter().find(|e| e.spec.name == "my-model").unwrap();
        assert!(mine.installed && !mine.known);
        assert_eq!(mine.spec.repo, "local/my-model");
        assert_eq!(all.len(), ModelSpec::known().len() + 1);
    }

    #[test]
    fn resolve_by_name_folder_or_path() {
        let root = tempfile::tempdir().unwrap();
        let err = resolve(root.path(), "minilm").unwrap_err();
        assert!(matches!(err, Error::NotInstalled { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("engram model pull all-MiniLM-L6-v2"),
            "{err}"
        );

        fake_model(&root.path().join("all-MiniLM-L6-v2"));
        let (spec, dir) = resolve(root.path(), "MiniLM").unwrap();
        assert_eq!(spec.repo, "sentence-transformers/all-MiniLM-L6-v2");
        assert_eq!(dir, root.path().join("all-MiniLM-L6-v2"));

        let elsewhere = tempfile::tempdir().unwrap();
        fake_model(&elsewhere.path().join("custom"));
        let p = elsewhere.path().join("custom");
        assert_eq!(resolve(root.path(), p.to_str().unwrap()).unwrap().1, p);

        let err = resolve(root.path(), "no-such-model")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no-such-model") && err.contains("all-MiniLM-L6-v2"),
            "{err}"
        );
    }

    #[test]
    fn pull_from_an_unreachable_endpoint_fails_cleanly() {
        let root = tempfile::tempdir().unwrap();
        let models = root.path().join("models");
        let mut events = Vec::new();
        let spec = ModelSpec::default_model();
        let err = pull(&spec, &models, Some("http://127.0.0.1:9/"), &mut |e| {
            events.push(e)
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Download { .. }), "{text}");
        assert!(
            text.contains(
                "http://127.0.0.1:9/sentence-transformers/all-MiniLM-L6-v2/resolve/main/config.json"
            ),
            "{text}"
        );
        assert!(text.contains("HF_ENDPOINT"), "{text}");
        // Nothing left behind: no model folder, no staging folder.
        let left: Vec<_> = std::fs::read_dir(&models)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, PullEvent::Installed { .. }))
        );
    }

    #[test]
    fn a_model_in_a_hub_cache_installs_without_a_download() {
        let root = tempfile::tempdir().unwrap();
        let spec = ModelSpec::default_model();
        let cache = root.path().join("hub");
        let empty = root.path().join("empty");
        let models = root.path().join("models");
        let mut events = Vec::new();
        let none = install_from_hub_cache(&spec, &models, std::slice::from_ref(&empty), &mut |e| {
            events.push(e)
        })
        .unwrap();
        assert_eq!(none, None, "no cache holds it");
        // An incomplete snapshot is passed over; a complete one (any revision) is taken.
        let repo = cache.join("models--sentence-transformers--all-MiniLM-L6-v2/snapshots");
        std::fs::create_dir_all(repo.join("half")).unwrap();
        std::fs::write(repo.join("half/config.json"), "{}").unwrap();
        fake_model(&repo.join("0123abcd"));
        let got = install_from_hub_cache(&spec, &models, &[empty, cache.clone()], &mut |e| {
            events.push(e)
        })
        .unwrap()
        .unwrap();
        assert_eq!(got, models.join(&spec.name));
        assert!(verify_checksums(&got).unwrap() > 0);
        assert!(got.join(FOLDER_SPEC_FILE).is_file());
        assert!(
            repo.join("0123abcd/model.safetensors").is_file(),
            "the cache is left"
        );
        assert_eq!(
            events[0],
            PullEvent::FromCache {
                path: repo.join("0123abcd")
            }
        );
        // Installed now: nothing more to copy.
        assert_eq!(
            install_from_hub_cache(&spec, &models, &[cache], &mut |_| {}).unwrap(),
            None
        );
    }

    #[test]
    fn pull_keeps_a_verified_install() {
        let root = tempfile::tempdir().unwrap();
        let spec = ModelSpec::default_model();
        let dir = root.path().join(&spec.name);
        fake_model(&dir);
        write_checksums(&dir, &MODEL_FILES).unwrap();
        let mut events = Vec::new();
        // The endpoint is unreachable: success proves nothing was downloaded.
        let got = pull(&spec, root.path(), Some("http://127.0.0.1:9"), &mut |e| {
            events.push(e)
        })
        .unwrap();
        assert_eq!(got, dir);
        assert_eq!(
            events,
            vec![PullEvent::AlreadyInstalled { path: dir.clone() }]
        );
    }

    #[test]
    fn a_failed_repull_leaves_the_broken_install_as_it_was() {
        let root = tempfile::tempdir().unwrap();
        let spec = ModelSpec::default_model();
        let dir = root.path().join(&spec.name);
        fake_model(&dir);
        write_checksums(&dir, &MODEL_FILES).unwrap();
        std::fs::write(dir.join("model.safetensors"), "changed").unwrap();
        assert!(pull(&spec, root.path(), Some("http://127.0.0.1:9"), &mut |_| {}).is_err());
        assert_eq!(
            std::fs::read_to_string(dir.join("model.safetensors")).unwrap(),
            "changed"
        );
        let names: Vec<_> = std::fs::read_dir(root.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(&spec.name)]);
    }
}
