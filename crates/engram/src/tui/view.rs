//! Drawing the TUI's state: the list (recent memories or a search's hits) and an opened
//! memory with its history (earlier texts) and links. Memory text is shown as plain text.

use super::app::{App, Opened, Screen, title_of};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, List, ListItem, ListState, Paragraph, Wrap};

pub fn draw(frame: &mut Frame, app: &App) {
    let [main, status, help] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    match &app.screen {
        Screen::List => list(frame, main, app),
        Screen::Detail(stack) => detail(frame, main, stack.last().expect("a memory")),
    }
    let status_text = match &app.input {
        Some(q) => format!("Search: {q}_"),
        None => app.status.clone(),
    };
    frame.render_widget(Paragraph::new(status_text), status);
    let keys = match (&app.input, &app.screen) {
        (Some(_), _) => "type a search · Enter run · Esc cancel",
        (None, Screen::List) => "j/k move · Enter open · / search · r recent · q quit",
        (None, Screen::Detail(_)) => "j/k pick a link · Enter open it · / search · Esc/q back",
    };
    frame.render_widget(
        Paragraph::new(keys).style(Style::default().add_modifier(Modifier::DIM)),
        help,
    );
}

fn list(frame: &mut Frame, area: ratatui::layout::Rect, app: &App) {
    let items: Vec<ListItem> = app
        .items
        .iter()
        .map(|m| {
            ListItem::new(Line::from(vec![
                Span::styled(
                    format!("#{} ", m.id),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::raw(format!("[{}] {} · {}", m.kind, m.room, title_of(m))),
            ]))
        })
        .collect();
    let block = Block::default().borders(Borders::ALL).title(format!(
        " engram · {} ({}) ",
        app.heading,
        app.items.len()
    ));
    let widget = List::new(items)
        .block(block)
        .highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("> ");
    let mut state = ListState::default().with_selected(Some(app.selected));
    frame.render_stateful_widget(widget, area, &mut state);
}

fn detail(frame: &mut Frame, area: ratatui::layout::Rect, o: &Opened) {
    let d = &o.detail;
    let m = &d.memory;
    let time = |ms| engram_core::time::format(ms);
    let mut lines = vec![
        Line::from(Span::styled(
            format!("#{} [{}] {}", m.id, m.kind, title_of(m)),
            Style::default().add_modifier(Modifier::BOLD),
        )),
        Line::from(format!(
            "project {} · {} · importance {:.2} · activation {:.2} · created {}",
            m.room,
            m.tier,
            m.importance,
            d.activation,
            time(m.created_at)
        )),
        Line::from(""),
    ];
    lines.extend(m.content.lines().map(|l| Line::from(l.to_string())));
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        format!("History ({} earlier texts)", d.revisions.len()),
        Style::default().add_modifier(Modifier::BOLD),
    )));
    for r in &d.revisions {
        let first = r.content.lines().next().unwrap_or("");
        lines.push(Line::from(format!(
            "  v{} {} ({}): {first}",
            r.number,
            time(r.at),
            r.reason
        )));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        format!("Links ({})", d.links.len()),
        Style::default().add_modifier(Modifier::BOLD),
    )));
    for (i, (l, title)) in d.links.iter().zip(&o.link_titles).enumerate() {
        let (arrow, other) = if l.src == m.id {
            ("→", l.dst)
        } else {
            ("←", l.src)
        };
        let text = format!("  {arrow} {} #{other} {title}", l.kind);
        lines.push(if i == o.selected_link {
            Line::from(Span::styled(
                format!(">{}", &text[1..]),
                Style::default().add_modifier(Modifier::REVERSED),
            ))
        } else {
            Line::from(text)
        });
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(format!(" engram · memory #{} ", m.id));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}
