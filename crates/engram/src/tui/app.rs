//! The TUI's state and what each key does, apart from the terminal so that it reads as a
//! plain state machine. Every read is one engine call (`Store::list_memories`, `recall`,
//! `show`); nothing here ranks, filters or touches storage.

use engram_core::Memory;
use engram_core::memory::IdRef;
use engram_store::MemoryDetail;
use engram_store::browse::{ListRequest, Order};
use engram_store::{Mode, RecallRequest, Store};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// How many memories a listing or a search shows (recall's own maximum).
const LIMIT: usize = 100;

/// One opened memory: its detail and, for each link, the title of the memory at its other
/// end (so the links read as what they point to).
pub struct Opened {
    pub detail: MemoryDetail,
    pub link_titles: Vec<String>,
    pub selected_link: usize,
}

pub enum Screen {
    List,
    /// Opened memories, the last on top; Esc goes back one.
    Detail(Vec<Opened>),
}

pub struct App {
    /// What the list shows: "Recent memories" or "Search: …".
    pub heading: String,
    pub items: Vec<Memory>,
    pub selected: usize,
    pub screen: Screen,
    /// The search being typed, while the search box is open.
    pub input: Option<String>,
    /// The last message (an error, "no memories found").
    pub status: String,
    pub quit: bool,
}

pub fn title_of(m: &Memory) -> String {
    let t = m
        .title
        .clone()
        .unwrap_or_else(|| m.content.lines().next().unwrap_or("").to_string());
    t.chars().take(100).collect()
}

impl App {
    pub fn new(store: &Store) -> anyhow::Result<App> {
        let mut app = App {
            heading: String::new(),
            items: Vec::new(),
            selected: 0,
            screen: Screen::List,
            input: None,
            status: String::new(),
            quit: false,
        };
        app.recent(store)?;
        Ok(app)
    }

    fn recent(&mut self, store: &Store) -> anyhow::Result<()> {
        let listed = store.list_memories(&ListRequest {
            order: Order::Recent,
            limit: LIMIT,
            ..Default::default()
        })?;
        self.items = listed.into_iter().map(|l| l.memory).collect();
        self.heading = "Recent memories".into();
        self.selected = 0;
        self.status = if self.items.is_empty() {
            "No memories yet.".into()
        } else {
            String::new()
        };
        Ok(())
    }

    fn search(&mut self, store: &mut Store, query: &str) -> anyhow::Result<()> {
        let mut req = RecallRequest::new(query);
        req.mode = Mode::Deep;
        req.limit = LIMIT;
        req.record_hits = false;
        let result = store.recall(&req)?;
        self.items = result.hits.into_iter().map(|h| h.memory).collect();
        self.heading = format!("Search: {query}");
        self.selected = 0;
        self.status = if self.items.is_empty() {
            format!("No memories found for: {query:?}")
        } else {
            String::new()
        };
        Ok(())
    }

    fn open(&mut self, store: &Store, id: engram_core::MemoryId) -> anyhow::Result<()> {
        let detail = store.show(&IdRef::Id(id))?;
        let link_titles = detail
            .links
            .iter()
            .map(|l| {
                let other = if l.src == id { l.dst } else { l.src };
                store
                    .show(&IdRef::Id(other))
                    .map(|d| title_of(&d.memory))
                    .unwrap_or_else(|_| "(gone)".into())
            })
            .collect();
        let opened = Opened {
            detail,
            link_titles,
            selected_link: 0,
        };
        match &mut self.screen {
            Screen::Detail(stack) => stack.push(opened),
            Screen::List => self.screen = Screen::Detail(vec![opened]),
        }
        Ok(())
    }

    /// Handles one key press; a failed read becomes the status line, never a crash.
    pub fn key(&mut self, store: &mut Store, k: KeyEvent) {
        if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
            self.quit = true;
            return;
        }
        if let Err(e) = self.dispatch(store, k.code) {
            self.status = format!("error: {e:#}");
        }
    }

    fn dispatch(&mut self, store: &mut Store, code: KeyCode) -> anyhow::Result<()> {
        if let Some(input) = &mut self.input {
            match code {
                KeyCode::Esc => self.input = None,
                KeyCode::Enter => {
                    let q = input.trim().to_string();
                    self.input = None;
                    if !q.is_empty() {
                        self.screen = Screen::List;
                        self.search(store, &q)?;
                    }
                }
                KeyCode::Backspace => {
                    input.pop();
                }
                KeyCode::Char(c) => input.push(c),
                _ => {}
            }
            return Ok(());
        }
        match &mut self.screen {
            Screen::List => match code {
                KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
                KeyCode::Char('j') | KeyCode::Down => {
                    self.selected = (self.selected + 1).min(self.items.len().saturating_sub(1))
                }
                KeyCode::Char('k') | KeyCode::Up => self.selected = self.selected.saturating_sub(1),
                KeyCode::Char('/') | KeyCode::Char('s') => self.input = Some(String::new()),
                KeyCode::Char('r') => self.recent(store)?,
                KeyCode::Enter => {
                    if let Some(m) = self.items.get(self.selected) {
                        let id = m.id;
                        self.open(store, id)?;
                    }
                }
                _ => {}
            },
            Screen::Detail(stack) => {
                let top = stack.last_mut().expect("a detail screen holds a memory");
                let links = top.detail.links.len();
                match code {
                    KeyCode::Char('q') | KeyCode::Esc => {
                        stack.pop();
                        if stack.is_empty() {
                            self.screen = Screen::List;
                        }
                    }
                    KeyCode::Char('j') | KeyCode::Down => {
                        top.selected_link = (top.selected_link + 1).min(links.saturating_sub(1))
                    }
                    KeyCode::Char('k') | KeyCode::Up => {
                        top.selected_link = top.selected_link.saturating_sub(1)
                    }
                    KeyCode::Char('/') | KeyCode::Char('s') => self.input = Some(String::new()),
                    KeyCode::Enter => {
                        if let Some(l) = top.detail.links.get(top.selected_link) {
                            let here = top.detail.memory.id;
                            let other = if l.src == here { l.dst } else { l.src };
                            self.open(store, other)?;
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}
