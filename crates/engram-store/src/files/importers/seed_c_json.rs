//! Seed C's export (`{version, sessions, observations, prompts, …}`), parsed as a stream:
//! each record of its lists is read, handed to [`CReader`] and dropped, so memory holds one
//! chunk and one record, never the document. A record over
//! [`limits::MAX_IMPORT_RECORD_BYTES`] fails the import naming it; keys that are not C's
//! lists are skipped without being held.

use super::seed_c::{CReader, Section};
use super::stream::{Opened, chunk_of, open_counted, rows};
use super::*;
use crate::files::transfer::{CHUNK_MEMORIES, Sink};
use engram_core::limits;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;
use std::rc::Rc;

/// Seed C's export read from `path` into the sink.
pub(super) fn feed_json(path: &Path, now: Millis, sink: &mut Sink<'_>) -> Result<()> {
    let Opened { file, read, len } = open_counted(path)?;
    let limit = Rc::new(RecordLimit::default());
    let input = Limited {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        limit: limit.clone(),
    };
    let mut feed = JsonFeed {
        reader: CReader::new(now),
        batch: Batch::default(),
        sink,
        failed: None,
        at: None,
        limit: limit.clone(),
        progress: (read, len),
    };
    let mut de = serde_json::Deserializer::from_reader(input);
    let parsed = de::Deserializer::deserialize_any(&mut de, &mut feed).and_then(|()| de.end());
    if let Some(e) = feed.failed.take() {
        return Err(e);
    }
    if let Err(e) = parsed {
        if limit.hit.get() {
            let (s, i) = feed.at.unwrap_or((Section::Observations, 0));
            return Err(engram_core::InputError::new(
                "file",
                format!(
                    "{}: {}[{i}] is longer than the import limit of {} bytes per record; nothing was imported",
                    path.display(),
                    s.name(),
                    limits::MAX_IMPORT_RECORD_BYTES
                ),
            )
            .into());
        }
        return Err(bad_file(path, e));
    }
    feed.reader.finish(&mut feed.batch);
    let at = (feed.progress.0.get(), feed.progress.1);
    (feed.sink)(chunk_of(&mut feed.batch, true), at)
}

/// Where the parse is in the document: the bytes read, and where the current record
/// started (`None` between records). Past the limit the reader fails and `hit` says why.
#[derive(Default)]
struct RecordLimit {
    pos: Cell<u64>,
    start: Cell<Option<u64>>,
    hit: Cell<bool>,
}

/// The document's bytes, counted against [`RecordLimit`]. serde_json reads its input a
/// byte at a time, so the count is exact.
struct Limited<R> {
    inner: R,
    limit: Rc<RecordLimit>,
}

impl<R: std::io::Read> std::io::Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let l = &self.limit;
        if let Some(start) = l.start.get()
            && l.pos.get() - start > limits::MAX_IMPORT_RECORD_BYTES
        {
            l.hit.set(true);
            return Err(std::io::Error::other("record over the import limit"));
        }
        let n = self.inner.read(buf)?;
        l.pos.set(l.pos.get() + n as u64);
        Ok(n)
    }
}

struct JsonFeed<'s, 'k> {
    reader: CReader,
    batch: Batch,
    sink: &'s mut Sink<'k>,
    /// The store's error that stopped the parse (serde carries only its text).
    failed: Option<Error>,
    /// The list and index of the record being read, for the limit's error.
    at: Option<(Section, usize)>,
    limit: Rc<RecordLimit>,
    progress: (Rc<Cell<u64>>, u64),
}

impl JsonFeed<'_, '_> {
    fn start_record(&self) {
        self.limit.start.set(Some(self.limit.pos.get()));
    }

    fn end_record(&self) {
        self.limit.start.set(None);
    }

    /// Hands a full chunk to the sink.
    fn flush<E: de::Error>(&mut self) -> std::result::Result<(), E> {
        if rows(&self.batch) < CHUNK_MEMORIES {
            return Ok(());
        }
        let at = (self.progress.0.get(), self.progress.1);
        (self.sink)(chunk_of(&mut self.batch, false), at).map_err(|e| {
            self.failed = Some(e);
            E::custom("the store refused a chunk")
        })
    }
}

impl<'de> Visitor<'de> for &mut JsonFeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("seed C's export: a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match Section::of_key(&key) {
                Some(section) => map.next_value_seed(List {
                    feed: &mut *self,
                    section,
                })?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// One of C's lists, read a record at a time.
struct List<'a, 's, 'k> {
    feed: &'a mut JsonFeed<'s, 'k>,
    section: Section,
}

impl<'de> DeserializeSeed<'de> for List<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for List<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "`{}` as a list of records", self.section.name())
    }

    /// A list that is `null` holds nothing.
    fn visit_unit<E: de::Error>(self) -> std::result::Result<(), E> {
        Ok(())
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> std::result::Result<(), S::Error> {
        let (feed, section) = (self.feed, self.section);
        feed.reader.has(section);
        for i in 0.. {
            feed.at = Some((section, i));
            feed.start_record();
            let Some(v) = seq.next_element::<Value>()? else {
                break;
            };
            feed.end_record();
            match v {
                Value::Object(o) => feed.reader.record(section, &o, &mut feed.batch),
                _ => feed
                    .batch
                    .warn(format!("{}[{i}]: not an object; skipped", section.name())),
            }
            feed.flush::<S::Error>()?;
        }
        Ok(())
    }
}
