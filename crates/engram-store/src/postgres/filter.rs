//! Statement arguments numbered as they are added, and a recall [`Filter`] as the `AND …`
//! conditions every candidate query of this backend appends to its scan of `memories m`.

use crate::storage::candidates::Filter;
use postgres::types::ToSql;

/// A statement's parameters, `$1`, `$2`, … in the order they were pushed.
#[derive(Default)]
pub(crate) struct Args {
    values: Vec<Box<dyn ToSql + Sync>>,
}

impl Args {
    /// Adds a value; returns its placeholder.
    pub(crate) fn push(&mut self, v: impl ToSql + Sync + 'static) -> String {
        self.values.push(Box::new(v));
        format!("${}", self.values.len())
    }

    pub(crate) fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values.iter().map(|v| v.as_ref()).collect()
    }
}

fn names<T>(items: &[T], name: impl Fn(&T) -> &'static str) -> Vec<String> {
    items.iter().map(|x| name(x).to_string()).collect()
}

/// `AND …` conditions on the memories alias `m`, their values pushed onto `args`.
pub(crate) fn filter_sql(filter: &Filter, args: &mut Args) -> String {
    let mut sql = format!(
        " AND m.tier = ANY({})",
        args.push(names(&filter.tiers, |t| t.as_str()))
    );
    if let Some(kinds) = &filter.kinds {
        sql.push_str(&format!(
            " AND m.kind = ANY({})",
            args.push(names(kinds, |k| k.as_str()))
        ));
    }
    if !filter.exclude_kinds.is_empty() {
        sql.push_str(&format!(
            " AND NOT (m.kind = ANY({}))",
            args.push(names(&filter.exclude_kinds, |k| k.as_str()))
        ));
    }
    if let Some(rooms) = &filter.rooms {
        sql.push_str(&format!(" AND m.room = ANY({})", args.push(rooms.clone())));
    }
    if let Some(at) = filter.valid_at {
        let p = args.push(at);
        sql.push_str(&format!(
            " AND m.valid_from <= {p} AND (m.valid_to IS NULL OR m.valid_to > {p})"
        ));
    }
    if !filter.hidden.is_empty() {
        sql.push_str(&format!(
            " AND NOT (m.id = ANY({}))",
            args.push(filter.hidden.clone())
        ));
    }
    if let Some(tag) = &filter.tag {
        sql.push_str(&format!(" AND m.tags::jsonb ? {}", args.push(tag.clone())));
    }
    sql
}
