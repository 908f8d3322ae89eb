//! The explorer on a large capture, as `kwire capture FILE --tui` opens it
//! (the index thread reading the file, rows streaming into the list, frames
//! decoded when shown), drawn on ratatui's TestBackend:
//! `cargo run --release --example explorer_capture -- FILE [WxH]`.
//!
//! Prints: time from start to the first frame list drawn; key-to-redraw
//! times (handling a key and drawing after it) while the index is still
//! being built, median and max; time to the complete index; peak resident
//! memory (VmHWM) when the index is complete and after paging through the
//! frames (PageDown in the frame list, each page's frame decoded from the
//! spool); and the same peaks as the process's own before it opened anything.
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kwire::analysis::index::{index_capture, IndexEvent, IndexReading, Progress, Spool};
use kwire::capture::CaptureOptions;
use kwire::schema::Catalogue;
use kwire::tui::app::CaptureState;
use kwire::tui::{ui, App, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: explorer_capture FILE [WxH]")
        .clone();
    let (w, h) = args
        .get(2)
        .and_then(|s| s.split_once('x'))
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        .unwrap_or((200u16, 60u16));
    let size = std::fs::metadata(&path).expect("the capture").len();
    let before = vm_hwm_kb();
    let start = Instant::now();
    let cat = Catalogue::builtin();
    let (spool, writer) = Spool::create().expect("spool");
    let progress = Progress {
        total: Some(size),
        ..Default::default()
    };
    let capture = CaptureState::new(spool, progress.clone(), false, Default::default());
    let mut app = App::for_capture(cat, None, capture, Theme { color: true });
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<IndexEvent>();
    println!("capture: {path}, {} MB; terminal {w}x{h}", size >> 20);
    std::thread::scope(|s| {
        let file = std::fs::File::open(&path).expect("open");
        let p = progress.clone();
        s.spawn(move || {
            index_capture(
                IndexReading {
                    cat,
                    release: None,
                    guess: false,
                    opts: &CaptureOptions::default(),
                },
                file,
                writer,
                &p,
                &tx,
            )
        });
        let mut first_list = None;
        let mut key_times = Vec::new();
        let keys = [
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::PageDown,
            KeyCode::Up,
            KeyCode::Char('p'),
            KeyCode::Char('t'),
        ];
        let mut k = 0;
        let mut done = false;
        while !done {
            // As the explorer's loop does: take what came, a bounded time a turn.
            let turn = Instant::now();
            while turn.elapsed() < Duration::from_millis(20) {
                match rx.try_recv() {
                    Ok(ev) => {
                        let end = matches!(ev, IndexEvent::Done(_));
                        app.on_index_event(ev);
                        if end {
                            done = true;
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        done = true;
                        break;
                    }
                }
            }
            terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
            if first_list.is_none() && app.frames.len() > 1 {
                first_list = Some(start.elapsed());
                println!(
                    "first frame list drawn: {:.3} s ({} frames indexed)",
                    secs(start.elapsed()),
                    app.frames.len()
                );
            }
            if first_list.is_some() && !done {
                // A key while the index is being built: handle it and redraw.
                let t = Instant::now();
                app.on_key(KeyEvent::new(keys[k % keys.len()], KeyModifiers::NONE));
                terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
                key_times.push(t.elapsed());
                k += 1;
                std::thread::sleep(Duration::from_millis(30));
            }
        }
        let indexed = start.elapsed();
        let at_index = vm_hwm_kb();
        println!(
            "index complete: {:.3} s, {} frames, {:.0} MB/s",
            secs(indexed),
            app.frames.len(),
            size as f64 / 1e6 / secs(indexed)
        );
        key_times.sort();
        if let (Some(med), Some(max)) = (key_times.get(key_times.len() / 2), key_times.last()) {
            println!(
                "key to redraw while indexing: {} keys, median {:.2} ms, max {:.2} ms",
                key_times.len(),
                ms(*med),
                ms(*max)
            );
        }
        // Paging through the whole list: every page decodes the frame it lands on.
        app.on_key(KeyEvent::new(KeyCode::Home, KeyModifiers::NONE));
        let t = Instant::now();
        let mut pages = 0;
        let mut page_times = Vec::new();
        while app.shown.last() != Some(&app.current) {
            let p = Instant::now();
            app.on_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
            terminal.draw(|f| ui::draw(f, &mut app)).unwrap();
            page_times.push(p.elapsed());
            pages += 1;
        }
        page_times.sort();
        println!(
            "paged through {} frames: {pages} pages in {:.3} s (median {:.2} ms, max {:.2} ms a page)",
            app.frames.len(),
            secs(t.elapsed()),
            ms(page_times[page_times.len() / 2]),
            ms(*page_times.last().unwrap())
        );
        println!(
            "peak resident memory: {} MB before opening, {} MB when indexed, {} MB after paging",
            before >> 10,
            at_index >> 10,
            vm_hwm_kb() >> 10
        );
    });
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The process's peak resident set (`VmHWM`), in KiB.
fn vm_hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
