//! Drawing: lays out the panes, tells the app where they are, renders each
//! from the app's state. No state changes here beyond the geometry.

use super::app::{App, Focus, FrameSort, FrameView, Geometry, Mode};
use super::details_view::details_lines;
use super::frames_view::FramesView;
use super::grid_view::{row_count, GridGeometry, HexGrid, Layer};
use super::help::HelpOverlay;
use super::layout::{panes, Pane};
use super::theme::Theme;
use super::tree_view::TreeView;
use crate::render::grid::ROW;
use crate::text::escape::sanitize;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use std::collections::HashSet;
use std::ops::Range;

/// Size of the grid pane before any frame exists: room for the paste hint.
const EMPTY_GRID: (usize, u16) = (2, 72);

pub fn draw(f: &mut ratatui::Frame, app: &mut App) {
    let (rows, width) = app.frame().map_or(EMPTY_GRID, |fv| {
        let len = fv.grid_bytes().len();
        (row_count(len), GridGeometry::new(len).width())
    });
    // The list shows with two frames or more, as tall as its lines (connection rows among them) allow.
    let list_lines = if app.frames.len() > 1 {
        app.lines.len()
    } else {
        0
    };
    let theme = app.theme;
    let focus = app.focus;
    let mut p = panes(f.area(), list_lines, rows, width, app.list_resize);
    // Kept as far as it took effect: `-` after `+` past the top acts at once.
    app.list_resize = p.list_resize;
    if app.zoomed {
        p = p.zoom(match focus {
            Focus::Frames if p.frames.is_some() => Pane::Frames,
            Focus::Frames | Focus::Grid => Pane::Grid,
            Focus::Tree => Pane::Tree,
        });
    }
    let block = |title: String, focused: bool, borders: Borders| {
        Block::new()
            .borders(borders)
            .title(Span::styled(title, theme.title(focused)))
    };
    let tree_borders = if p.side_by_side {
        Borders::TOP | Borders::LEFT
    } else {
        Borders::TOP
    };
    let frames_block = block(frames_title(app), focus == Focus::Frames, Borders::TOP);
    let title = grid_title(app.frame());
    // The legend takes what the title leaves of the pane's width, never more.
    let room = usize::from(p.grid.width).saturating_sub(title.chars().count() + 1);
    let grid_block = block(title, focus == Focus::Grid, Borders::TOP).title(
        Line::from(
            app.frame()
                .map(|fv| legend(fv, theme, room))
                .unwrap_or_default(),
        )
        .right_aligned(),
    );
    let tree_block = block(" tree ".into(), focus == Focus::Tree, tree_borders);
    let details_block = block(" details ".into(), false, Borders::TOP);
    app.set_geometry(Geometry {
        frames: p.frames.map(|r| frames_block.inner(r)),
        grid: grid_block.inner(p.grid),
        tree: tree_block.inner(p.tree),
    });
    let app = &*app;
    let g = app.geometry;

    if let (Some(r), Some(inner)) = (p.frames, g.frames) {
        f.render_widget(frames_block, r);
        let view = FramesView {
            app,
            focused: focus == Focus::Frames,
        };
        f.render_widget(view, inner);
    }
    f.render_widget(grid_block, p.grid);
    f.render_widget(tree_block, p.tree);
    f.render_widget(details_block.clone(), p.details);
    let details_inner = details_block.inner(p.details);
    match app.frame() {
        Some(fv) => {
            let layers = grid_layers(app, fv, g.grid);
            f.render_widget(
                HexGrid {
                    bytes: fv.grid_bytes(),
                    top_row: fv.grid_top,
                    layers: &layers,
                    theme,
                },
                g.grid,
            );
            let empty = HashSet::new();
            let hits = app.search.as_ref().map_or(&empty, |s| &s.paths);
            f.render_widget(
                TreeView {
                    root: &fv.frame.root,
                    state: &fv.tree,
                    hits,
                    stub_summaries: &fv.stub_summaries,
                    focused: focus == Focus::Tree,
                    theme,
                },
                g.tree,
            );
            let details = Paragraph::new(details_lines(
                &fv.frame,
                fv.details_bytes(),
                fv.tree.selected(),
                theme,
            ))
            .wrap(Wrap { trim: false });
            f.render_widget(details, details_inner);
        }
        None => {
            let hint = "Paste hex text (the terminal's paste) to decode it as a request. ? lists the keys, q quits.";
            f.render_widget(Paragraph::new(hint).wrap(Wrap { trim: true }), g.grid);
        }
    }
    draw_status(f, app, p.status);
    match &app.mode {
        Mode::Help => f.render_widget(HelpOverlay { theme }, f.area()),
        Mode::Records(list) => f.render_widget(
            super::records_view::RecordsOverlay { list, theme },
            f.area(),
        ),
        Mode::Findings(list) => f.render_widget(
            super::findings_view::FindingsOverlay { list, theme },
            f.area(),
        ),
        _ => {}
    }
}

fn grid_title(fv: Option<&FrameView>) -> String {
    match fv {
        Some(FrameView {
            buffer: Some(b), ..
        }) => format!(
            " hex · decompressed from {} · {} B · offsets d: ",
            sanitize(&b.from),
            b.bytes.len()
        ),
        Some(fv) => format!(" hex · {} B ", fv.frame.bytes.len()),
        None => " hex ".into(),
    }
}

/// ` frames (shown of all, filter) `, and how far indexing is.
fn frames_title(app: &App) -> String {
    let mut t = match &app.filter {
        Some((text, _)) => format!(
            " frames ({} of {}, filter {}) ",
            app.shown.len(),
            app.frames.len(),
            sanitize(text)
        ),
        None => format!(" frames ({}) ", app.frames.len()),
    };
    if app.sort != FrameSort::Capture {
        t.push_str(&format!("sorted by {} (s) ", app.sort.name()));
    }
    if let Some(cap) = &app.capture {
        if !cap.done {
            let read = cap.progress.read.load(std::sync::atomic::Ordering::Relaxed);
            match cap.progress.total.filter(|&t| t > 0) {
                Some(total) => t.push_str(&format!("indexing {}% ", read.min(total) * 100 / total)),
                // A stream (standard input, live traffic): frames join as they come.
                None => t.push_str(&format!("following: {} MB so far ", read >> 20)),
            }
        }
        if let Some(e) = &cap.error {
            t.push_str(&format!("stopped: {} ", sanitize(e)));
        }
        if cap.skipped > 0 {
            t.push_str(&format!(
                "· {} skip notes ({} B in no frame) ",
                cap.skipped, cap.skipped_bytes
            ));
        }
        if cap.tls_notes > 0 {
            t.push_str(&format!("· {} TLS notes ", cap.tls_notes));
        }
    }
    t
}

/// The regions present in the frame, each in its own style, as many as fit
/// in `room` columns (the error mark first: it matters most).
fn legend(fv: &FrameView, theme: Theme, room: usize) -> Vec<Span<'static>> {
    let mut spans: Vec<Span> = Vec::new();
    let mut used = 0;
    if !fv.errors.is_empty() && room >= 8 {
        spans.push(Span::styled(" error ", theme.error()));
        spans.push(Span::raw(" "));
        used += 8;
    }
    for r in &fv.legend {
        let label = r.label();
        let w = label.chars().count() + 3;
        if used + w > room {
            break;
        }
        used += w;
        spans.push(Span::styled(format!(" {label} "), theme.region(*r)));
        spans.push(Span::raw(" "));
    }
    spans
}

/// Base region colours, then search hits, errors, the selection and the
/// cursor; ranges are cut to the rows on screen.
fn grid_layers<'a>(app: &App, fv: &'a FrameView, area: Rect) -> Vec<Layer<'a>> {
    let window = fv.grid_top * ROW..(fv.grid_top + usize::from(area.height)) * ROW;
    let visible = |rs: &mut dyn Iterator<Item = Range<usize>>| -> Vec<Range<usize>> {
        rs.filter(|r| r.start < window.end && r.end > window.start)
            .collect()
    };
    // Hits and errors in the bytes shown: a hit's node is in the buffer shown
    // (the frame's own bytes, or the decompressed data selected).
    let buffer = fv.buffer.as_ref().map(|b| b.path.as_slice());
    let in_view = |h: &&super::search::Hit| h.buffer.as_deref() == buffer;
    let hits = app
        .search
        .as_ref()
        .map(|s| visible(&mut s.hits.iter().filter(in_view).map(|h| h.range.clone())))
        .unwrap_or_default();
    let errors = if buffer.is_none() {
        visible(&mut fv.errors.iter().cloned())
    } else {
        Vec::new()
    };
    vec![
        Layer::Regions(fv.grid_regions()),
        Layer::Ranges(hits, app.theme.hit()),
        Layer::Ranges(errors, app.theme.error()),
        Layer::Ranges(vec![fv.selection()], app.theme.selection()),
        Layer::Ranges(vec![fv.cursor_range()], app.theme.cursor()),
    ]
}

fn draw_status(f: &mut ratatui::Frame, app: &App, area: Rect) {
    let theme = app.theme;
    let line = match (&app.mode, &app.status, app.frame()) {
        (Mode::Prompt(p), _, _) => {
            let text = format!("{}{}", p.kind.label(), sanitize(&p.text));
            let x = area.x + (text.chars().count() as u16).min(area.width.saturating_sub(1));
            f.set_cursor_position((x, area.y));
            Line::from(text)
        }
        (_, Some(s), _) => Line::from(Span::styled(
            s.text.clone(),
            if s.error {
                theme.error_text()
            } else {
                ratatui::style::Style::new()
            },
        )),
        (_, None, Some(fv)) => {
            let mut spans = Vec::new();
            if let Some(e) = &fv.frame.error {
                spans.push(Span::styled(
                    format!("✗ {} ", sanitize(&e.to_string())),
                    theme.error_text(),
                ));
            }
            let keys = if app.capture.is_some() {
                "/ search · f filter · p pair · ? keys · q quit"
            } else {
                "/ search · : jump · ? keys · q quit"
            };
            // A capture's frames by the number `capture --list` gives them.
            let number = app
                .frames
                .get(app.current)
                .and_then(|s| s.row.as_ref())
                .map_or(format!("{}/{}", app.current + 1, app.frames.len()), |r| {
                    format!("#{} of {}", r.frame.index, app.frames.len())
                });
            // Within decompressed data the cursor indexes that data, marked `d:` as in the tree.
            let d = if fv.buffer.is_some() { "d:" } else { "" };
            spans.push(Span::raw(format!(
                "frame {number} ({}) · byte {d}0x{:04x} · {keys}",
                fv.source, fv.cursor
            )));
            Line::from(spans)
        }
        (_, None, None) if app.capture.is_some() => Line::from(if app.frames.is_empty() {
            "reading the capture… · q quit"
        } else {
            "? keys · q quit"
        }),
        (_, None, None) => Line::from("? keys · q quit"),
    };
    f.render_widget(Paragraph::new(line), area);
}
