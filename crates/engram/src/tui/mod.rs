//! `engram tui`: seed C's terminal UI over engram's store. Browse the newest memories,
//! search (engram's recall), open a memory with its history and links, follow a link.
//! Keys are C's: `j`/`k`, Enter, `/` or `s` to search, Esc or `q` back, Ctrl+C quits.
//! `app.rs` is the state and the keys (engine calls only), `view.rs` the drawing.

mod app;
mod view;

use ratatui::crossterm::event::{self, Event, KeyEventKind};

pub fn run() -> anyhow::Result<()> {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!("tui: stdout is not a terminal");
    }
    let mut store = crate::open::open_store_with_model()?;
    let mut app = app::App::new(&store)?;
    let mut terminal = ratatui::init();
    let result = (|| -> anyhow::Result<()> {
        while !app.quit {
            terminal.draw(|f| view::draw(f, &app))?;
            if let Event::Key(k) = event::read()?
                && k.kind == KeyEventKind::Press
            {
                app.key(&mut store, k);
            }
        }
        Ok(())
    })();
    ratatui::restore();
    result
}
