//! The explorer's state and what every key, click and paste does to it.
//!
//! Nothing here draws: `ui` reads this state and reports back where the panes
//! were ([`Geometry`]), which paging and mouse clicks need.

use super::findings_view::FindingsList;
use super::grid_view::{row_count, GridGeometry};
use super::help::{command_for, Command};
use super::layout::RESIZE_STEP;
use super::records_view::{record_lines, RecordsList};
use super::search::Search;
use super::theme::Theme;
use super::tree_state::TreeState;
use super::tree_view::marker_x;
use crate::analysis::captured::decode_captured;
use crate::analysis::exchange::FieldTester;
use crate::analysis::exchange::Topic;
use crate::analysis::filter::Filter;
use crate::analysis::index::{self, ConnRow, IndexEvent, IndexedFrame, Progress, Spool};
use crate::analysis::records_table::carries_records;
use crate::analysis::records_table::ProducedOffsets;
use crate::budget::Budget;
use crate::decode::fields::{open_element_stub, stub_elements, TopicIds};
use crate::decode::records::deferred::{open_stub, stub_items, stub_records};
use crate::decode::regions::byte_regions;
use crate::decode::tree::Deferred;
use crate::decode::{
    decode_frame, decode_frames, DecodeOptions, Direction, Frame, Node, Region, Role, Value,
};
use crate::input::framing::missing_size_prefix;
use crate::input::hex_text::parse_hex_text;
use crate::render::grid::ROW;
use crate::schema::{Catalogue, MessageKind};
use crate::text::escape::sanitize;
use bytes::Bytes;
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::ops::Range;

/// How often a sorted list takes in the rows indexed since (`s` while indexing).
const SORT_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// What `R` may spend decoding the capture's frames for their records.
const RECORDS_TIME: std::time::Duration = std::time::Duration::from_secs(3);

/// What one search key may spend looking through other frames.
const SEARCH_TIME: std::time::Duration = std::time::Duration::from_millis(1500);

/// Lines a mouse wheel notch scrolls.
const WHEEL_LINES: usize = 3;

/// One frame with everything its panes need, computed once per decode.
pub struct FrameView {
    pub frame: Frame,
    /// Where it came from: `input` or `paste 2`, or for live traffic its time,
    /// connection and direction.
    pub source: String,
    /// Whether the frame's offset in its input means something (not for
    /// frames of live traffic, each its own input).
    pub located: bool,
    /// The region of every byte (deepest node wins).
    pub regions: Vec<Option<Region>>,
    /// The regions that occur, in legend order.
    pub legend: Vec<Region>,
    /// Bytes where decoding failed.
    pub errors: Vec<Range<usize>>,
    pub tree: TreeState,
    /// The grid cursor: a byte offset within the frame.
    pub cursor: usize,
    /// First grid row on screen.
    pub grid_top: usize,
    /// The decompressed data the grid shows while the selection is inside
    /// it (its offsets, `d:` in the title, index that data, not the frame).
    pub buffer: Option<DecompressedBuffer>,
    /// What walks a stub of a records field too big to hold whole when it
    /// is opened ([`stub_items`]): the decode's budget.
    pub budget: Budget,
    /// The stubs opened, oldest first, with what folds each back.
    opened: VecDeque<(Vec<usize>, Deferred)>,
    /// What each stub of a big array's element summed up when it was whole
    /// (its first few fields), by its offset: the tree shows it collapsed.
    pub(crate) stub_summaries: HashMap<usize, String>,
}

/// Records fields over this many bytes, in frames over 1 MiB, are held as
/// one stub per batch, each walked when opened ([`stub_items`]): a Fetch
/// response of 400,000 records would take a gigabyte of nodes whole. A
/// smaller frame is held whole (`DecodeOptions::leave_in_frames_over`).
pub const STUB_RECORDS_OVER: usize = crate::decode::frame::DEFER_RECORDS_OVER;

/// Arrays of structs whose elements take over this many bytes are held as
/// one stub per element, each walked when opened
/// (`decode::fields::stub_elements`): a Metadata response of 200,000
/// partitions would take a gigabyte of nodes whole.
pub(crate) const STUB_ELEMENTS_OVER: usize = crate::decode::frame::DEFER_ELEMENTS_OVER;

/// `opts` for a frame the explorer holds: its big records fields and
/// arrays left to be held as stubs ([`FrameView::stubbed`]).
pub fn stubbing(opts: DecodeOptions) -> DecodeOptions {
    DecodeOptions {
        defer_records_over: Some(STUB_RECORDS_OVER),
        defer_elements_over: Some(STUB_ELEMENTS_OVER),
        defer_record_arrays: true,
        leave_in_frames_over: crate::decode::frame::DRAWN_IN_TURN_OVER,
        ..opts
    }
}

/// The node a stub stands for, walked from the frame's `bytes`: a batch's
/// or message's (within `budget`), or an element's (its big arrays' elements
/// stubs in turn, their summaries put in `summaries`); `None` for no stub.
fn open_any_stub(
    cat: &Catalogue,
    bytes: &Bytes,
    stub: &Node,
    (budget, summaries): (&Budget, &mut HashMap<usize, String>),
) -> Option<Node> {
    match stub.deferred()? {
        Deferred::Records(_) => open_stub(cat, bytes, stub, budget),
        Deferred::Elements(_) => {
            let mut node = open_element_stub(cat, bytes, stub, &mut summed_up(summaries))?;
            // Its records fields were left with the frame's (`defer_record_arrays`).
            stub_records(cat, bytes, &mut node, budget);
            Some(node)
        }
    }
}

/// `fv`'s frame decoded again with its arrays whose elements hold records
/// whole (its big records fields still stubs), when it holds such arrays
/// as stubs; within a budget of its own under the same limits.
fn partitions_whole(
    cat: &Catalogue,
    release: Option<&str>,
    fv: &FrameView,
    topic_ids: &TopicIds,
) -> Option<Frame> {
    let mut left = false;
    fv.frame.root.walk(&mut |n, _| {
        left |= matches!(n.deferred(), Some(Deferred::Elements(d)) if !d.array.records.is_empty())
    });
    if !left {
        return None;
    }
    let f = &fv.frame;
    let budget = Budget::new(fv.budget.limits());
    let opts = DecodeOptions {
        direction: Some(f.direction),
        api_key: f.api_key,
        api_version: f.api_version,
        release: release.map(str::to_string),
        topic_ids: topic_ids.clone(),
        budget: budget.clone(),
        defer_records_over: Some(STUB_RECORDS_OVER),
        ..Default::default()
    };
    let mut again = crate::decode::decode_frame(cat, f.bytes.clone(), f.input_offset, &opts);
    stub_items(cat, &mut again, &budget);
    Some(again)
}

/// The byte ranges of the errors at and under `n` in a frame of `len`
/// bytes that stopped `at`, none empty.
fn errors_under(n: &Node, at: Option<usize>, len: usize) -> Vec<Range<usize>> {
    // Errors inside decompressed data are at offsets of that data, not of the frame.
    fn walk(n: &Node, at: Option<usize>, len: usize, out: &mut Vec<Range<usize>>) {
        if n.error().is_some() {
            let start = at
                .filter(|a| (n.offset..n.end()).contains(a))
                .unwrap_or(n.offset);
            out.push(start.min(len)..n.end().min(len));
        }
        if n.role != Role::Decompressed {
            n.children.iter().for_each(|c| walk(c, at, len, out));
        }
    }
    let mut out = Vec::new();
    walk(n, at, len, &mut out);
    out.retain(|r| !r.is_empty());
    out
}

/// The regions `regions` holds, in the legend's order.
fn legend_of(regions: &[Option<Region>]) -> Vec<Region> {
    Region::ALL
        .into_iter()
        .filter(|r| regions.contains(&Some(*r)))
        .collect()
}

/// What keeps each element's summary, by offset, as it becomes a stub.
fn summed_up(summaries: &mut HashMap<usize, String>) -> impl FnMut(&Node) + '_ {
    |n: &Node| {
        if let Some(s) = super::tree_view::fields_summary(n) {
            summaries.insert(n.offset, s);
        }
    }
}

/// Stubs held open at once: beyond these the oldest not holding the
/// selection is folded back (a batch of 100 records is about 1,000 nodes).
pub const OPEN_STUBS: usize = 64;

/// Decompressed record data shown in the grid.
pub struct DecompressedBuffer {
    /// The path of the node holding it ([`Role::Decompressed`]).
    pub path: Vec<usize>,
    pub bytes: Bytes,
    pub regions: Vec<Option<Region>>,
    /// What it was decompressed from: the name of the node above it.
    pub from: String,
}

/// The length of the longest prefix of `path` that ends at a decompressed
/// node (0: the path stays in the frame's own bytes).
fn decompressed_prefix(root: &Node, path: &[usize]) -> usize {
    let mut node = root;
    let mut prefix = 0;
    for (depth, &i) in path.iter().enumerate() {
        let Some(c) = node.children.get(i) else { break };
        node = c;
        if node.role == Role::Decompressed {
            prefix = depth + 1;
        }
    }
    prefix
}

impl FrameView {
    pub fn new(frame: Frame, source: impl Into<String>) -> FrameView {
        let regions = byte_regions(&frame.root, frame.bytes.len());
        let legend = legend_of(&regions);
        let errors = error_ranges(&frame);
        let mut tree = TreeState::new(&frame.root);
        tree.select(&frame.root, &frame.root.path_at(0));
        FrameView {
            frame,
            source: source.into(),
            located: true,
            regions,
            legend,
            errors,
            tree,
            cursor: 0,
            grid_top: 0,
            buffer: None,
            budget: Budget::default(),
            opened: VecDeque::new(),
            stub_summaries: HashMap::new(),
        }
    }

    /// A frame decoded with [`stubbing`]: its big records fields
    /// become stubs, one per batch, and its big arrays one per element,
    /// opened within `budget`.
    pub fn stubbed(
        cat: &Catalogue,
        mut frame: Frame,
        source: impl Into<String>,
        budget: Budget,
    ) -> FrameView {
        stub_items(cat, &mut frame, &budget);
        let bytes = frame.bytes.clone();
        let mut summaries = HashMap::new();
        // What each element paints in the grid, kept before it becomes a
        // stub: its tagged fields' bytes are coloured as in its whole tree.
        let mut inside: Vec<Option<Region>> = vec![None; bytes.len()];
        {
            let mut sum = summed_up(&mut summaries);
            stub_elements(cat, &bytes, &mut frame.root, &mut |n: &Node| {
                sum(n);
                let one = std::slice::from_ref(n);
                crate::render::grid::paint_nodes_walking(one, false, &mut inside, (cat, &bytes));
            });
        }
        let mut fv = FrameView::new(frame, source);
        // The elements are deeper than the stubs that painted their bytes: theirs win.
        for (r, i) in fv.regions.iter_mut().zip(inside) {
            if i.is_some() {
                *r = i;
            }
        }
        fv.legend = legend_of(&fv.regions);
        fv.stub_summaries = summaries;
        fv.budget = budget;
        fv
    }

    /// Whether the node at `path` is a stub not opened yet.
    pub(crate) fn is_stub(&self, path: &[usize]) -> bool {
        self.frame
            .root
            .at_path(path)
            .is_some_and(|n| n.deferred().is_some())
    }

    /// Open the stub at `path`: its batch walked into nodes in its place
    /// and their bytes painted; beyond [`OPEN_STUBS`] the oldest opened stub
    /// that holds neither the selection nor the grid's buffer is folded back.
    pub fn open_stub(&mut self, cat: &Catalogue, path: &[usize]) -> Result<(), String> {
        let Some(stub) = self.frame.root.at_path(path) else {
            return Ok(());
        };
        let Some(d) = stub.deferred().cloned() else {
            return Ok(());
        };
        let held = (&self.budget, &mut self.stub_summaries);
        let node = open_any_stub(cat, &self.frame.bytes, stub, held).ok_or_else(|| {
            format!(
                "{} no longer walks into one node",
                sanitize(&stub.name.text())
            )
        })?;
        for c in &node.children {
            paint_regions(c, &mut self.regions);
        }
        // Its errors, which the frame's were found without.
        let at = self.frame.error.as_ref().map(|e| e.offset);
        let len = self.frame.bytes.len();
        for r in errors_under(&node, at, len) {
            if !self.errors.contains(&r) {
                self.errors.push(r);
            }
        }
        let len = self.regions.len();
        for r in self.regions[node.offset.min(len)..node.end().min(len)]
            .iter()
            .flatten()
        {
            if !self.legend.contains(r) {
                self.legend.push(*r);
            }
        }
        self.legend
            .sort_by_key(|r| Region::ALL.iter().position(|a| a == r));
        if let Some(at) = self.frame.root.at_path_mut(path) {
            *at = node;
        }
        self.opened.push_back((path.to_vec(), d));
        self.fold_oldest();
        Ok(())
    }

    /// Fold opened stubs back, oldest first, until [`OPEN_STUBS`] are open;
    /// never the one opened last. A folded stub's stubs opened within it go
    /// with it, and so does what was expanded under it.
    fn fold_oldest(&mut self) {
        let mut i = 0;
        while self.opened.len() > OPEN_STUBS && i + 1 < self.opened.len() {
            let (path, _) = &self.opened[i];
            let held = self.tree.selected().starts_with(path)
                || self
                    .buffer
                    .as_ref()
                    .is_some_and(|b| b.path.starts_with(path));
            if held {
                i += 1;
                continue;
            }
            let Some((path, d)) = self.opened.remove(i) else {
                break;
            };
            self.opened
                .retain(|(p, _)| !(p.len() > path.len() && p.starts_with(&path)));
            i = i.min(self.opened.len());
            self.tree.collapse_under(&self.frame.root, &path);
            if let Some(n) = self.frame.root.at_path_mut(&path) {
                n.children = Vec::new();
                n.set_deferred(d);
            }
        }
    }

    /// `/` over the frame, each stub walked in turn (and dropped).
    pub fn search(&self, cat: &Catalogue, query: &str) -> Search {
        // What the walked stubs hold is dropped after: their summaries too.
        let open = |n: &Node| {
            let mut summaries = HashMap::new();
            open_any_stub(cat, &self.frame.bytes, n, (&self.budget, &mut summaries))
        };
        Search::new(&self.frame.root, &self.frame.bytes, query, &open)
    }

    /// How many stubs the frame holds unopened: records' and elements'.
    pub fn unopened_stubs(&self) -> usize {
        let mut n = 0;
        self.frame
            .root
            .walk(&mut |node, _| n += usize::from(node.deferred().is_some()));
        n
    }

    /// The bytes the grid shows: the frame's, or the decompressed data the selection is in.
    pub(crate) fn grid_bytes(&self) -> &[u8] {
        self.buffer
            .as_ref()
            .map_or(&self.frame.bytes[..], |b| &b.bytes[..])
    }

    /// The bytes the selected node's own offsets index, and whether they are
    /// decompressed data: those of the decompressed node above it. A
    /// decompressed node's own range is in the bytes it was decompressed
    /// from, though the grid shows what it holds.
    pub(crate) fn details_bytes(&self) -> (&[u8], bool) {
        let selected = self.tree.selected();
        let above = &selected[..selected.len().saturating_sub(1)];
        match decompressed_prefix(&self.frame.root, above) {
            0 => (&self.frame.bytes[..], false),
            p => match self.frame.root.at_path(&selected[..p]).map(|n| &n.value) {
                Some(Value::Bytes(Some(b))) => (&b[..], true),
                _ => (self.grid_bytes(), self.buffer.is_some()),
            },
        }
    }

    /// The region of each byte the grid shows.
    pub(crate) fn grid_regions(&self) -> &[Option<Region>] {
        self.buffer
            .as_ref()
            .map_or(&self.regions[..], |b| &b.regions[..])
    }

    /// After the tree's selection moved: the grid shows the buffer it is in.
    fn sync_buffer(&mut self) {
        let selected = self.tree.selected();
        let prefix = decompressed_prefix(&self.frame.root, selected);
        let same = match &self.buffer {
            Some(b) => prefix > 0 && b.path == selected[..prefix],
            None => prefix == 0,
        };
        if same {
            return;
        }
        self.buffer = None;
        self.cursor = 0;
        self.grid_top = 0;
        if prefix == 0 {
            return;
        }
        let path = selected[..prefix].to_vec();
        let from = self
            .frame
            .root
            .at_path(&path[..prefix - 1])
            .map_or(String::new(), |n| n.name.to_string());
        let Some(node) = self.frame.root.at_path(&path) else {
            return;
        };
        let Value::Bytes(Some(bytes)) = &node.value else {
            return;
        };
        let mut regions = vec![None; bytes.len()];
        for c in &node.children {
            paint_regions(c, &mut regions);
        }
        self.buffer = Some(DecompressedBuffer {
            path,
            bytes: bytes.clone(),
            regions,
            from,
        });
    }

    /// The deepest node at grid byte `at`, as a path from the root.
    fn path_at_grid(&self, at: usize) -> Vec<usize> {
        match &self.buffer {
            Some(b) => self.path_in_buffer(&b.path, at),
            None => self.frame.root.path_at(at),
        }
    }

    /// The deepest node at byte `at` of the decompressed data of the node at `buffer`.
    pub(crate) fn path_in_buffer(&self, buffer: &[usize], at: usize) -> Vec<usize> {
        let mut path = buffer.to_vec();
        let Some(mut node) = self.frame.root.at_path(&path) else {
            return path;
        };
        // Decompressed data nested in this buffer has offsets of its own.
        while let Some(i) = node
            .child_at(at)
            .filter(|&i| node.children[i].role != Role::Decompressed)
        {
            path.push(i);
            node = &node.children[i];
        }
        path
    }

    pub fn selected_node(&self) -> &Node {
        self.frame
            .root
            .at_path(self.tree.selected())
            .unwrap_or(&self.frame.root)
    }

    /// The cursor's byte.
    pub(crate) fn cursor_range(&self) -> Range<usize> {
        self.cursor..self.cursor + 1
    }

    /// The selected node's bytes, within the bytes the grid shows (the
    /// decompressed node itself: all its data).
    pub fn selection(&self) -> Range<usize> {
        let n = self.selected_node();
        let len = self.grid_bytes().len();
        if self
            .buffer
            .as_ref()
            .is_some_and(|b| b.path == self.tree.selected())
        {
            return 0..len;
        }
        n.offset.min(len)..n.end().min(len)
    }
}

/// Regions of the bytes (the frame's, or a decompressed buffer's) that node
/// `n` and its subtree cover: deeper nodes over their ancestors; data
/// decompressed again inside is not these bytes.
fn paint_regions(n: &Node, out: &mut [Option<Region>]) {
    crate::decode::regions::paint_regions(n, false, out, &mut |_, _, _| {});
}

/// From the offset where decoding stopped to the end of each node marked with
/// an error (the whole node when the offset lies outside it).
fn error_ranges(frame: &Frame) -> Vec<Range<usize>> {
    let len = frame.bytes.len();
    let at = frame.error.as_ref().map(|e| e.offset);
    let mut out = errors_under(&frame.root, at, len);
    if let (true, Some(a)) = (out.is_empty(), at) {
        if a < len {
            out.push(a..a + 1);
        }
    }
    out
}

/// One line of the frame list.
pub struct FrameSlot {
    /// A capture's frame: what its list line says; its bytes are in the
    /// capture's spool ([`CaptureState`]).
    pub row: Option<IndexedFrame>,
    /// The frame decoded: always for input, pasted and live frames; for a
    /// capture's, while it is shown or was recently ([`KEEP_DECODED`]).
    pub view: Option<Box<FrameView>>,
}

/// A capture's frames decoded at once besides the current one; others are
/// decoded again from the spool when shown.
pub const KEEP_DECODED: usize = 32;
/// And at most this many of their bytes (a tree takes some 30 times its
/// frame's bytes: a 1 MB Fetch response's, about 30 MB).
pub(crate) const KEEP_DECODED_BYTES: usize = 2 << 20;

/// What the explorer knows of the capture it indexes.
pub struct CaptureState {
    pub spool: Spool,
    pub guess: bool,
    pub progress: Progress,
    /// Topic names by id learned so far, for decoding.
    pub topic_ids: TopicIds,
    /// The table the rows' topics index.
    pub topics: Vec<Topic>,
    /// What the decoded frames may cost, all together.
    pub budget: Budget,
    /// The index is complete (or stopped, with the error).
    pub done: bool,
    pub error: Option<String>,
    pub skipped: usize,
    pub skipped_bytes: u64,
    pub tls_notes: usize,
    /// Times shown relative to the first frame (`t` toggles).
    pub relative_time: bool,
    /// What the conversation rules found so far (`!` lists them).
    pub findings: crate::analysis::finding_groups::Groups,
}

impl CaptureState {
    /// A capture about to be indexed into `spool`, its frames decoded within `budget`.
    pub fn new(spool: Spool, progress: Progress, guess: bool, budget: Budget) -> CaptureState {
        CaptureState {
            spool,
            guess,
            progress,
            topic_ids: TopicIds::default(),
            topics: Vec::new(),
            budget,
            done: false,
            error: None,
            skipped: 0,
            skipped_bytes: 0,
            tls_notes: 0,
            relative_time: false,
            findings: Default::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Frames,
    Grid,
    Tree,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// `/`: search.
    Search,
    /// `:`: jump to an offset.
    Jump,
    /// `v`: decode the frame again as another API/version.
    Decode,
    /// `f`: show only the frames of exchanges the filter selects.
    Filter,
    /// `x`: write the node, frame or list to a file.
    Export,
}

impl PromptKind {
    pub fn label(&self) -> &'static str {
        match self {
            PromptKind::Search => "/",
            PromptKind::Jump => ":",
            PromptKind::Decode => "decode as (API VERSION for a response, or `request`): ",
            PromptKind::Filter => "filter (e.g. ErrorCode != 0 and api == Fetch; kwire filter --help; empty shows all): ",
            PromptKind::Export => "export (hex FILE: the node's bytes · json FILE: the frame · pcap FILE: the frames listed): ",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Prompt(Prompt),
    Help,
    /// `r`: the frame's records.
    Records(RecordsList),
    /// `!`: what went wrong in the capture.
    Findings(FindingsList),
}

/// A message for the status line until the next key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

/// Content areas of the panes at the last draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Geometry {
    pub frames: Option<Rect>,
    pub grid: Rect,
    pub tree: Rect,
}

/// The frame list's order (`s` goes round them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameSort {
    /// Capture order, with connection rows and names among the frames.
    Capture,
    /// Slowest exchange first (a request and its response side by side), then frames without one.
    Latency,
    /// Largest frame first.
    Size,
    /// By API name, each API's frames in capture order.
    Api,
}

impl FrameSort {
    pub fn next(self) -> FrameSort {
        match self {
            FrameSort::Capture => FrameSort::Latency,
            FrameSort::Latency => FrameSort::Size,
            FrameSort::Size => FrameSort::Api,
            FrameSort::Api => FrameSort::Capture,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FrameSort::Capture => "time",
            FrameSort::Latency => "latency",
            FrameSort::Size => "size",
            FrameSort::Api => "API",
        }
    }
}

/// One line of the frame list: a frame (its slot), or a connection opened or
/// closed (its index in [`App::conn_rows`]), which is not selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListLine {
    Frame(usize),
    Conn(usize),
    /// The line naming a connection's addresses (`conn 3 = a → b`), before
    /// its first line: that of frame `at` (`frame`) or of connection row `at`.
    ConnName {
        frame: bool,
        at: usize,
    },
}

pub struct App<'a> {
    cat: &'a Catalogue,
    release: Option<String>,
    /// Every frame of the input or capture, in order (chunked: millions of rows grow without copying).
    pub frames: super::rows::Chunked<FrameSlot>,
    /// The frames the list shows (all, or those the filter selects), ascending.
    pub shown: Vec<usize>,
    /// A capture's connections opened and closed, in capture order.
    pub conn_rows: Vec<ConnRow>,
    /// Connections whose name line is in [`Self::lines`].
    named_conns: std::collections::HashSet<usize>,
    /// The list's lines: the frames shown and, among them, the opens and
    /// closes the filter lets show ([`Filter::shows_conn_events`]).
    pub lines: Vec<ListLine>,
    /// The capture being explored, when the frames come from its index.
    pub capture: Option<CaptureState>,
    /// The filter typed at `f`, as typed and as read.
    pub filter: Option<(String, Filter)>,
    /// The field tests the filter's rows passed, as decoded from the spool.
    row_tests: std::cell::RefCell<RowTests>,
    /// Captured frames decoded, oldest first (bounded by [`KEEP_DECODED`]).
    decoded: VecDeque<usize>,
    pub current: usize,
    pub focus: Focus,
    pub mode: Mode,
    /// The search over the current frame.
    pub search: Option<Search>,
    pub status: Option<Status>,
    pub theme: Theme,
    pub geometry: Geometry,
    /// First line of the frame list on screen.
    pub frames_top: usize,
    pastes: usize,
    /// `w`: trees hide the wire's plumbing (every frame shown, until `w` again).
    pub plain: bool,
    /// `z`: the focused pane takes the whole screen (Tab moves the zoom).
    pub zoomed: bool,
    /// `+`/`-`: lines added to (taken from) the frame list's room.
    pub list_resize: i16,
    /// `s`: the order of the frame list.
    pub sort: FrameSort,
    /// When the list's lines were last arranged in [`Self::sort`]'s order.
    arranged: std::time::Instant,
    pub quit: bool,
    /// The findings list as Enter left it: `!` opens it again there.
    last_findings: Option<FindingsList>,
}

impl<'a> App<'a> {
    pub fn new(
        cat: &'a Catalogue,
        release: Option<String>,
        frames: Vec<Frame>,
        theme: Theme,
    ) -> App<'a> {
        Self::with_budget(cat, release, frames, theme, Budget::default())
    }

    /// [`App::new`] over frames decoded within `budget` (what their stubs,
    /// [`STUB_RECORDS_OVER`], are walked within).
    pub fn with_budget(
        cat: &'a Catalogue,
        release: Option<String>,
        frames: Vec<Frame>,
        theme: Theme,
        budget: Budget,
    ) -> App<'a> {
        let mut app = App {
            cat,
            release,
            shown: (0..frames.len()).collect(),
            conn_rows: Vec::new(),
            named_conns: Default::default(),
            lines: (0..frames.len()).map(ListLine::Frame).collect(),
            frames: frames
                .into_iter()
                .map(|f| FrameSlot {
                    row: None,
                    view: Some(Box::new(FrameView::stubbed(
                        cat,
                        f,
                        "input",
                        budget.clone(),
                    ))),
                })
                .collect(),
            capture: None,
            filter: None,
            row_tests: Default::default(),
            decoded: VecDeque::new(),
            current: 0,
            focus: Focus::Grid,
            mode: Mode::Normal,
            search: None,
            status: None,
            theme,
            geometry: Geometry::default(),
            frames_top: 0,
            pastes: 0,
            plain: false,
            zoomed: false,
            list_resize: 0,
            sort: FrameSort::Capture,
            arranged: std::time::Instant::now(),
            last_findings: None,
            quit: false,
        };
        if app.frames.is_empty() {
            app.info("no frames yet: paste hex text to decode it (? for keys)");
        }
        app
    }

    /// The explorer over a capture being indexed: its rows arrive through
    /// [`App::on_index_event`]; a frame is decoded when it is shown.
    pub fn for_capture(
        cat: &'a Catalogue,
        release: Option<String>,
        capture: CaptureState,
        theme: Theme,
    ) -> App<'a> {
        let mut app = App::new(cat, release, Vec::new(), theme);
        app.capture = Some(capture);
        app.focus = Focus::Frames;
        app.status = None;
        app
    }

    pub fn catalogue(&self) -> &'a Catalogue {
        self.cat
    }

    pub fn frame(&self) -> Option<&FrameView> {
        self.frames
            .get(self.current)
            .and_then(|s| s.view.as_deref())
    }

    /// What the index thread handed on: rows join the list (the filter
    /// decides which show), counts and the end go to the status line.
    pub fn on_index_event(&mut self, ev: IndexEvent) {
        let Some(cap) = self.capture.as_mut() else {
            return;
        };
        match ev {
            IndexEvent::Rows {
                rows,
                conns,
                new_topics,
                topic_ids,
            } => {
                cap.topics.extend(new_topics);
                cap.topic_ids = topic_ids;
                let first = self.frames.len();
                for row in rows {
                    let i = self.frames.len();
                    // A response tells its request where it is.
                    if let Some(p) = row.pair {
                        if let Some(FrameSlot { row: Some(req), .. }) = self.frames.get_mut(p) {
                            req.pair = Some(i);
                        }
                    }
                    self.frames.push(FrameSlot {
                        row: Some(row),
                        view: None,
                    });
                }
                let shown = (first..self.frames.len())
                    .filter(|&i| self.selects(i))
                    .collect::<Vec<_>>();
                // Opens and closes come after every line so far: merged with the new frames.
                let first_conn = self.conn_rows.len();
                self.conn_rows.extend(conns);
                let was_empty = self.shown.is_empty();
                if self.sort == FrameSort::Capture {
                    let lines = self.merged_lines(&shown, first_conn);
                    let lines = self.with_conn_names(lines);
                    self.lines.extend(lines);
                    self.shown.extend(shown);
                } else {
                    // Sorted: the new rows join at the next arrangement, at
                    // most every SORT_EVERY while indexing (a sort of the
                    // whole list per batch would be quadratic) and at the end.
                    self.shown.extend(shown);
                    if self.arranged.elapsed() >= SORT_EVERY {
                        self.arrange_lines();
                    }
                }
                if was_empty && !self.shown.is_empty() {
                    self.select_frame(self.first_listed().unwrap_or(self.shown[0]));
                    // The list starts at its top: the first connection's open is above its first frame.
                    self.frames_top = 0;
                }
            }
            IndexEvent::Notes {
                skipped,
                skipped_bytes,
                tls,
            } => {
                (cap.skipped, cap.skipped_bytes, cap.tls_notes) = (skipped, skipped_bytes, tls);
            }
            IndexEvent::Findings(found) => {
                for f in &found {
                    cap.findings.add(f);
                }
            }
            IndexEvent::Done(result) => {
                cap.done = true;
                cap.error = result.err();
                if self.sort != FrameSort::Capture {
                    self.arrange_lines();
                }
            }
        }
    }

    /// The lines of the frames `shown` (ascending) with the connection rows
    /// from `first_conn` on that the filter lets show, in capture order.
    fn merged_lines(&self, shown: &[usize], first_conn: usize) -> Vec<ListLine> {
        let conn_shows = |r: &ConnRow| {
            self.filter
                .as_ref()
                .is_none_or(|(_, f)| f.shows_conn_events(r.event.conn))
        };
        let mut conns = (first_conn..self.conn_rows.len())
            .filter(|&k| conn_shows(&self.conn_rows[k]))
            .peekable();
        let mut lines = Vec::with_capacity(shown.len());
        for &i in shown {
            while let Some(k) = conns.next_if(|&k| self.conn_rows[k].before <= i) {
                lines.push(ListLine::Conn(k));
            }
            lines.push(ListLine::Frame(i));
        }
        lines.extend(conns.map(ListLine::Conn));
        lines
    }

    /// The list's lines for the frames shown, in the order [`Self::sort`] says.
    fn arrange_lines(&mut self) {
        self.arranged = std::time::Instant::now();
        self.named_conns.clear();
        if self.sort == FrameSort::Capture {
            let lines = self.merged_lines(&self.shown, 0);
            self.lines = self.with_conn_names(lines);
            return;
        }
        let mut order = self.shown.clone();
        let row = |i: usize| self.frames.get(i).and_then(|s| s.row.as_ref());
        let size = |i: usize| match self.frames.get(i) {
            Some(FrameSlot { row: Some(r), .. }) => r.frame.len,
            Some(FrameSlot { view: Some(v), .. }) => v.frame.bytes.len(),
            _ => 0,
        };
        match self.sort {
            FrameSort::Latency => {
                // A request takes its response's latency: the exchange's.
                let latency = |i: usize| {
                    let r = row(i)?;
                    r.latency_us.or_else(|| row(r.pair?)?.latency_us)
                };
                order.sort_by_key(|&i| (std::cmp::Reverse(latency(i)), i));
            }
            FrameSort::Size => order.sort_by_key(|&i| (std::cmp::Reverse(size(i)), i)),
            FrameSort::Api => {
                let name = |i: usize| {
                    row(i)
                        .and_then(|r| r.entry.api_key)
                        .and_then(|k| self.cat.api_name(k))
                };
                // Frames of no known API last.
                order.sort_by_key(|&i| (name(i).is_none(), name(i), i));
            }
            FrameSort::Capture => {}
        }
        self.lines = order.into_iter().map(ListLine::Frame).collect();
    }

    /// `lines` with a name line before each connection's first, as
    /// `capture --list` has them (the addresses said once, not in every row).
    fn with_conn_names(&mut self, lines: Vec<ListLine>) -> Vec<ListLine> {
        let mut out = Vec::with_capacity(lines.len() + 1);
        for l in lines {
            let named = match l {
                ListLine::Frame(i) => self
                    .frames
                    .get(i)
                    .and_then(|s| s.row.as_ref())
                    .map(|r| (r.frame.conn, true, i)),
                ListLine::Conn(k) => self.conn_rows.get(k).map(|r| (r.event.conn, false, k)),
                ListLine::ConnName { .. } => None,
            };
            if let Some((conn, frame, at)) = named {
                if self.named_conns.insert(conn) {
                    out.push(ListLine::ConnName { frame, at });
                }
            }
            out.push(l);
        }
        out
    }

    /// A capture's row as the captured frame its list line is written from (without its bytes).
    pub fn listed(&self, row: &IndexedFrame) -> Option<crate::capture::CapturedFrame> {
        Some(self.capture.as_ref()?.spool.listed(row))
    }

    /// A name line's connection and its client and broker addresses.
    pub fn conn_name(&self, frame: bool, at: usize) -> Option<(usize, SocketAddr, SocketAddr)> {
        match frame {
            true => {
                let f = self.listed(self.frames.get(at)?.row.as_ref()?)?;
                Some(match f.direction {
                    Direction::Request => (f.conn, f.from, f.to),
                    Direction::Response => (f.conn, f.to, f.from),
                })
            }
            false => {
                let e = &self.conn_rows.get(at)?.event;
                Some((e.conn, e.client, e.broker))
            }
        }
    }

    /// Where frame `i` is (or would be) among the list's lines.
    pub(crate) fn line_position(&self, i: usize) -> usize {
        if self.sort != FrameSort::Capture {
            return self
                .lines
                .iter()
                .position(|&l| l == ListLine::Frame(i))
                .unwrap_or(0);
        }
        let conn_row_at = |k: usize| self.conn_rows.get(k).map_or(0, |r| r.before);
        let key = |l: &ListLine| match *l {
            ListLine::Frame(f) => (f, 1),
            ListLine::Conn(k) => (conn_row_at(k), 0),
            // Just before the line it precedes.
            ListLine::ConnName { frame: true, at } => (at, 0),
            ListLine::ConnName { frame: false, at } => (conn_row_at(at), 0),
        };
        self.lines
            .binary_search_by_key(&(i, 1), key)
            .unwrap_or_else(|p| p)
    }

    /// Filter with `f` (typed as `text`), its field tests run afresh.
    pub(crate) fn set_filter(&mut self, text: String, f: Filter) {
        *self.row_tests.borrow_mut() = RowTests {
            tester: FieldTester::new(f.needs().fields),
            passed: Default::default(),
        };
        self.filter = Some((text, f));
    }

    /// Whether the filter shows frame `i` (frames not of a capture always show).
    fn selects(&self, i: usize) -> bool {
        match (&self.filter, &self.capture) {
            (Some((_, f)), Some(cap)) if self.frames.get(i).is_some_and(|s| s.row.is_some()) => {
                let row = |j: usize| self.frames.get(j).and_then(|s| s.row.as_ref());
                let passed = |j: usize| {
                    let mut t = self.row_tests.borrow_mut();
                    let RowTests { tester, passed } = &mut *t;
                    let Some(tester) = tester else { return 0 };
                    *passed.entry(j).or_insert_with(|| {
                        row(j)
                            .and_then(|r| cap.spool.frame(r).ok())
                            .map_or(0, |f| tester.passed(self.cat, self.release.as_deref(), &f))
                    })
                };
                index::selects(f, row, i, &cap.topics, &passed)
            }
            _ => true,
        }
    }

    fn frame_mut(&mut self) -> Option<&mut FrameView> {
        self.frames
            .get_mut(self.current)
            .and_then(|s| s.view.as_deref_mut())
    }

    fn info(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            error: false,
        });
    }

    fn fail(&mut self, text: impl Into<String>) {
        self.status = Some(Status {
            text: text.into(),
            error: true,
        });
    }

    /// Record where the panes are; after a resize, bring the selection back into view.
    pub(crate) fn set_geometry(&mut self, g: Geometry) {
        if g != self.geometry {
            self.geometry = g;
            self.scroll_to_selection();
        }
    }

    fn grid_height(&self) -> usize {
        usize::from(self.geometry.grid.height).max(1)
    }

    fn tree_height(&self) -> usize {
        usize::from(self.geometry.tree.height).max(1)
    }

    /// The panes Tab cycles through: the frame list only when it is shown.
    fn focus_order(&self) -> Vec<Focus> {
        let mut v = Vec::new();
        if self.frames.len() > 1 {
            v.push(Focus::Frames);
        }
        v.extend([Focus::Grid, Focus::Tree]);
        v
    }

    // ---- selection and its two-way sync -------------------------------------------------

    /// Grid → tree: put the cursor on a byte and select the deepest node there.
    pub fn move_cursor(&mut self, byte: usize) {
        let cat = self.cat;
        let Some(fv) = self.frame_mut() else { return };
        let Some(last) = fv.grid_bytes().len().checked_sub(1) else {
            return;
        };
        fv.cursor = byte.min(last);
        let mut path = fv.path_at_grid(fv.cursor);
        // A byte inside a stub is one of its fields': the stub is opened to
        // find it (the stubs within it too, a level at a time).
        let mut failed = None;
        while fv.is_stub(&path) {
            if let Err(e) = fv.open_stub(cat, &path) {
                failed = Some(e);
                break;
            }
            let deeper = fv.path_at_grid(fv.cursor);
            if deeper.len() <= path.len() {
                break;
            }
            path = deeper;
        }
        fv.tree.select(&fv.frame.root, &path);
        let cursor = fv.cursor_range();
        self.reveal(cursor);
        if let Some(e) = failed {
            self.fail(e);
        }
    }

    /// Tree → grid: select a node, put the cursor on its first byte and show its bytes.
    pub fn select_path(&mut self, path: &[usize]) {
        let cat = self.cat;
        let Some(fv) = self.frame_mut() else { return };
        // A record's path may go through a batch held as a stub: opened first.
        for depth in 0..path.len() {
            if fv.is_stub(&path[..depth]) {
                if let Err(e) = fv.open_stub(cat, &path[..depth]) {
                    return self.fail(e);
                }
            }
        }
        let Some(fv) = self.frame_mut() else { return };
        if fv.frame.root.at_path(path).is_some() {
            fv.tree.select(&fv.frame.root, path);
            self.after_tree_selection();
        }
    }

    fn after_tree_selection(&mut self) {
        let Some(fv) = self.frame_mut() else { return };
        fv.sync_buffer();
        let sel = fv.selection();
        fv.cursor = sel.start.min(fv.grid_bytes().len().saturating_sub(1));
        self.reveal(sel);
    }

    /// Scroll the grid to show `bytes` and the tree to show its selection.
    fn reveal(&mut self, bytes: Range<usize>) {
        let (gh, th) = (self.grid_height(), self.tree_height());
        let Some(fv) = self.frame_mut() else { return };
        fv.grid_top = scroll_to(
            fv.grid_top,
            grid_rows(bytes),
            gh,
            row_count(fv.grid_bytes().len()),
        );
        fv.tree.scroll_to_selection(th);
    }

    /// Where the current frame is in the list shown (where it would be, when
    /// the filter hides it).
    pub(crate) fn shown_position(&self) -> usize {
        self.shown
            .binary_search(&self.current)
            .unwrap_or_else(|p| p)
    }

    /// After a resize or a change of frame: the current frame and selection in view.
    fn scroll_to_selection(&mut self) {
        // The list scrolls only while it is on screen: a height made up for
        // a hidden list (one frame so far, `-` all the way, another pane
        // zoomed) would scroll its top lines away for good.
        if let Some(frames) = self.geometry.frames.filter(|r| r.height > 0) {
            let frames_h = usize::from(frames.height);
            let at = self.line_position(self.current);
            // The last frame brings the closes after it into view too.
            let end = match self.shown.last() == Some(&self.current) {
                true => self.lines.len().max(at + 1),
                false => at + 1,
            };
            self.frames_top = scroll_to(self.frames_top, at..end, frames_h, self.lines.len());
        }
        if let Some(sel) = self.frame().map(FrameView::selection) {
            self.reveal(sel);
        }
    }

    pub fn select_frame(&mut self, i: usize) {
        if i >= self.frames.len() {
            return;
        }
        self.current = i;
        self.ensure_decoded(i);
        self.apply_plain();
        self.refresh_search();
        self.scroll_to_selection();
    }

    /// The shown frame's tree hides the wire's plumbing when `w` says so.
    fn apply_plain(&mut self) {
        let plain = self.plain;
        if let Some(fv) = self.frame_mut() {
            fv.tree.set_plain(&fv.frame.root, plain);
        }
    }

    /// Decode a capture's frame from the spool when it has no view; the
    /// oldest views beyond [`KEEP_DECODED`] are dropped (with what they held
    /// of the budget).
    fn ensure_decoded(&mut self, i: usize) {
        let Some(cap) = self.capture.as_ref() else {
            return;
        };
        let Some(slot) = self.frames.get(i) else {
            return;
        };
        let (Some(row), None) = (&slot.row, &slot.view) else {
            return;
        };
        let captured = match cap.spool.frame(row) {
            Ok(f) => f,
            Err(e) => {
                return self.fail(format!(
                    "frame {}: the spool cannot be read: {e}",
                    row.frame.index
                ))
            }
        };
        let opts = stubbing(DecodeOptions {
            topic_ids: cap.topic_ids.clone(),
            budget: cap.budget.clone(),
            ..Default::default()
        });
        let (frame, _) = decode_captured(
            self.cat,
            self.release.as_deref(),
            &captured,
            cap.guess,
            opts,
        );
        let arrow = row.frame.direction.arrow();
        let source = format!("conn {} {arrow}", row.frame.conn);
        let mut fv = FrameView::stubbed(self.cat, frame, source, cap.budget.clone());
        fv.located = false;
        self.frames[i].view = Some(Box::new(fv));
        self.decoded.push_back(i);
        // Oldest first, never the frame shown (nor the one just decoded).
        let held = |app: &App| {
            app.decoded
                .iter()
                .filter_map(|&d| app.frames.get(d).and_then(|s| s.row.as_ref()))
                .map(|r| r.frame.len)
                .sum::<usize>()
        };
        let mut spare = self.decoded.len();
        while spare > 0 && (self.decoded.len() > KEEP_DECODED || held(self) > KEEP_DECODED_BYTES) {
            spare -= 1;
            let Some(old) = self.decoded.pop_front() else {
                break;
            };
            if old == self.current || old == i {
                self.decoded.push_back(old);
                continue;
            }
            if let Some(slot) = self.frames.get_mut(old) {
                slot.view = None;
            }
        }
    }

    fn refresh_search(&mut self) {
        let query = self.search.as_ref().map(|s| s.query.clone());
        self.search = match (query, self.frame()) {
            (Some(q), Some(fv)) => Some(fv.search(self.cat, &q)),
            (Some(q), None) => Some(Search {
                query: q,
                hits: Vec::new(),
                paths: Default::default(),
                current: None,
            }),
            _ => None,
        };
    }

    /// The frame shown `step` places after (or before) the current one in the list.
    fn shown_step(&self, step: isize) -> Option<usize> {
        if self.sort != FrameSort::Capture {
            // Sorted, the list's lines are its frames, in their order; a
            // frame not among them yet (rows join twice a second) starts
            // from the first.
            let Some(at) = self
                .lines
                .iter()
                .position(|&l| l == ListLine::Frame(self.current))
            else {
                return self.first_listed();
            };
            let at = at as isize + step;
            return match usize::try_from(at).ok().and_then(|a| self.lines.get(a)) {
                Some(&ListLine::Frame(i)) => Some(i),
                _ => None,
            };
        }
        let at = match self.shown.binary_search(&self.current) {
            Ok(p) => p as isize + step,
            // Hidden by the filter: the next one shown is at `p`.
            Err(p) if step > 0 => p as isize + step - 1,
            Err(p) => p as isize + step,
        };
        usize::try_from(at)
            .ok()
            .and_then(|a| self.shown.get(a))
            .copied()
    }

    /// `p`: from a request to its response and back.
    fn jump_to_pair(&mut self) {
        let pair = self
            .frames
            .get(self.current)
            .and_then(|s| s.row.as_ref())
            .map(|r| (r.pair, r.frame.direction));
        match pair {
            Some((Some(p), _)) => {
                if self.shown.binary_search(&p).is_err() {
                    self.info("its pair is hidden by the filter (f, then Enter on an empty line, shows all)");
                    return;
                }
                self.select_frame(p);
            }
            Some((None, Direction::Request)) => {
                self.fail("no response to this request in the capture (yet)")
            }
            Some((None, Direction::Response)) => {
                self.fail("this response's request is not in the capture")
            }
            None => self.fail("p jumps between a captured request and its response"),
        }
    }

    /// `}` and `{`: the next (previous) frame shown of the same connection.
    fn same_connection(&mut self, forward: bool) {
        let Some(conn) = self
            .frames
            .get(self.current)
            .and_then(|s| s.row.as_ref())
            .map(|r| r.frame.conn)
        else {
            return self.fail("} and { move within a captured connection");
        };
        let at = self.shown_position();
        let same = |&&i: &&usize| {
            self.frames[i]
                .row
                .as_ref()
                .is_some_and(|r| r.frame.conn == conn && i != self.current)
        };
        let next = if forward {
            self.shown[at.min(self.shown.len())..].iter().find(same)
        } else {
            self.shown[..at].iter().rev().find(same)
        };
        match next.copied() {
            Some(i) => self.select_frame(i),
            None => self.info(format!(
                "no {} frame of conn {conn}",
                if forward { "later" } else { "earlier" }
            )),
        }
    }

    /// `f`: show only what the filter selects (empty: everything).
    fn apply_filter(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            self.filter = None;
            *self.row_tests.borrow_mut() = RowTests::default();
        } else {
            match Filter::parse(self.cat, text) {
                Ok(f) if f.needs_findings() => {
                    let Some(cap) = &self.capture else {
                        return self.fail("filter: finding is for captures: kwire check FILE tells a file of frames' findings");
                    };
                    let rules = cap.findings.rules_by_frame();
                    self.set_filter(text.to_string(), f.with_findings(rules));
                }
                Ok(f) => self.set_filter(text.to_string(), f),
                // Shown in place: the message, and the text up to the place.
                Err(e) => {
                    let before = text.get(..e.at).unwrap_or(text);
                    return self.fail(format!(
                        "filter: {} (at column {}: {}⟨here⟩)",
                        sanitize(&e.message),
                        before.chars().count() + 1,
                        sanitize(before)
                    ));
                }
            }
        }
        self.shown = (0..self.frames.len())
            .filter(|&i| self.selects(i))
            .collect();
        self.arrange_lines();
        let count = self.shown.len();
        match (self.shown.binary_search(&self.current), self.shown.first()) {
            (Ok(_), _) => self.scroll_to_selection(),
            (Err(p), Some(_)) => self.select_frame(self.shown[p.min(count - 1)]),
            (Err(_), None) => {}
        }
        match &self.filter {
            Some((t, f)) => {
                // `finding` reads the findings the index has sent so far.
                let partial = f.needs_findings() && self.capture.as_ref().is_some_and(|c| !c.done);
                self.info(format!(
                    "filter {}: {count} of {}{}",
                    sanitize(t),
                    crate::text::count(self.frames.len(), "frame", "frames"),
                    if partial {
                        " (finding: the findings read so far; f again when done)"
                    } else {
                        ""
                    }
                ))
            }
            None => self.info(format!(
                "no filter: {}",
                crate::text::count(count, "frame", "frames")
            )),
        }
    }

    // ---- keys ---------------------------------------------------------------------------

    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        // Raw mode delivers Ctrl-C as a key, not a signal.
        if key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('c' | 'C'))
        {
            self.quit = true;
            return;
        }
        match &self.mode {
            Mode::Help => {
                if matches!(
                    key.code,
                    KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::Enter
                ) {
                    self.mode = Mode::Normal;
                }
                return;
            }
            Mode::Prompt(_) => return self.prompt_key(key),
            Mode::Records(_) => return self.records_key(key.code),
            Mode::Findings(_) => return self.findings_key(key.code),
            Mode::Normal => {}
        }
        self.status = None;
        match command_for(key.code) {
            Some(c) => self.run(c),
            None => match self.focus {
                Focus::Frames => self.frames_key(key.code),
                Focus::Grid => self.grid_key(key.code),
                Focus::Tree => self.tree_key(key.code),
            },
        }
    }

    /// What a key of [`super::help::KEYS`] does.
    fn run(&mut self, command: Command) {
        match command {
            Command::Quit => self.quit = true,
            Command::Help => self.mode = Mode::Help,
            Command::NextPane | Command::PreviousPane => {
                let order = self.focus_order();
                let i = order.iter().position(|f| *f == self.focus).unwrap_or(0);
                let step = if command == Command::NextPane {
                    1
                } else {
                    order.len() - 1
                };
                self.focus = order[(i + step) % order.len()];
            }
            Command::Search => self.open_prompt(PromptKind::Search, String::new()),
            Command::JumpToOffset => self.open_prompt(PromptKind::Jump, String::new()),
            Command::DecodeAs => {
                // The prompt starts empty (typing never appends to the old answer); what
                // the frame is now decoded as is said on the status line.
                let now = self
                    .frame()
                    .map(|fv| self.describe_api(&fv.frame))
                    .unwrap_or_default();
                if !now.is_empty() {
                    self.info(format!("decoded now as {now}"));
                }
                self.open_prompt(PromptKind::Decode, String::new());
            }
            Command::NextMatch => self.search_step(true),
            Command::PreviousMatch => self.search_step(false),
            Command::PreviousFrame | Command::NextFrame => {
                if let Some(i) = self.shown_step(if command == Command::NextFrame { 1 } else { -1 })
                {
                    self.select_frame(i);
                }
            }
            Command::Pair => self.jump_to_pair(),
            Command::NextInConnection => self.same_connection(true),
            Command::PreviousInConnection => self.same_connection(false),
            Command::Filter if self.capture.is_some() => {
                let now = self
                    .filter
                    .as_ref()
                    .map(|(t, _)| t.clone())
                    .unwrap_or_default();
                self.open_prompt(PromptKind::Filter, now);
            }
            Command::ToggleTime if self.capture.is_some() => {
                if let Some(cap) = self.capture.as_mut() {
                    cap.relative_time = !cap.relative_time;
                }
            }
            Command::Filter | Command::ToggleTime => {
                self.fail("f and t are for captures (kwire capture FILE --tui)")
            }
            Command::Export => self.open_prompt(PromptKind::Export, String::new()),
            Command::Records => {
                let Some(fv) = self.frame() else { return };
                let ids = self.capture.as_ref().map(|c| c.topic_ids.clone()).unwrap_or_default();
                let produced = self.produced_offsets(self.current);
                // The table finds records fields in the tree: partitions held
                // as stubs are decoded again with their records fields.
                let again = partitions_whole(self.cat, self.release.as_deref(), fv, &ids);
                let frame = again.as_ref().unwrap_or(&fv.frame);
                // Batches held as stubs are walked one at a time for the table.
                let open = |n: &Node| open_stub(self.cat, &frame.bytes, n, &fv.budget);
                let mut list = record_lines(
                    self.cat,
                    self.release.as_deref(),
                    frame,
                    &ids,
                    produced.as_ref(),
                    &open,
                );
                if list.lines.is_empty() {
                    return self.info("this frame holds no records");
                }
                list.of = format!("frame {}", self.frame_number(self.current));
                self.mode = Mode::Records(list);
            }
            Command::CaptureRecords => self.capture_records(),
            Command::Findings => match self.capture.as_ref() {
                Some(cap) => {
                    let mut list = FindingsList::new(self.cat, cap.findings.to_sorted(), !cap.done);
                    // Back where Enter left it, while the groups are the same.
                    if let Some(last) = self.last_findings.take() {
                        if last.lines == list.lines {
                            list = FindingsList { partial: list.partial, ..last };
                        }
                    }
                    self.mode = Mode::Findings(list);
                }
                None => self.fail("! is for captures (kwire capture FILE --tui): kwire check FILE tells a file of frames' findings"),
            },
            Command::ClearSearch => self.search = None,
            Command::Zoom => self.zoomed = !self.zoomed,
            Command::GrowList => self.list_resize = (self.list_resize + RESIZE_STEP).min(500),
            Command::ShrinkList => {
                self.list_resize = (self.list_resize - RESIZE_STEP).max(-500);
            }
            Command::Sort => {
                self.sort = self.sort.next();
                self.arrange_lines();
                self.scroll_to_selection();
                self.info(format!("frames sorted by {} (s: next order)", self.sort.name()));
            }
            Command::ScrollLeft | Command::ScrollRight => {
                if let Some(fv) = self.frame_mut() {
                    fv.tree.left = match command {
                        Command::ScrollLeft => fv.tree.left.saturating_sub(SIDEWAYS),
                        _ => (fv.tree.left + SIDEWAYS).min(MAX_SIDEWAYS),
                    };
                }
            }
            Command::TogglePlumbing => {
                self.plain = !self.plain;
                self.apply_plain();
                self.info(match self.plain {
                    true => "the wire's plumbing is hidden: lengths, counts, tags, empty tagged_fields (w shows it)",
                    false => "every node of the wire is shown (w hides lengths, counts and empty tagged_fields)",
                });
            }
            Command::ExpandAll | Command::CollapseAll => {
                let expand = command == Command::ExpandAll;
                if let Some(fv) = self.frame_mut() {
                    match expand {
                        true => fv.tree.expand_all(&fv.frame.root),
                        false => fv.tree.collapse_all(&fv.frame.root),
                    }
                }
                self.scroll_to_selection();
            }
        }
    }

    /// Where the broker put a captured Produce request's records, from its
    /// response when the capture has it (read back from the spool).
    fn produced_offsets(&self, i: usize) -> Option<ProducedOffsets> {
        let cap = self.capture.as_ref()?;
        let row = self.frames.get(i)?.row.as_ref()?;
        let produce = Some(crate::analysis::records_table::PRODUCE);
        if row.frame.direction != Direction::Request || row.frame.api_key != produce {
            return None;
        }
        let response = self.frames.get(row.pair?)?.row.as_ref()?;
        let captured = cap.spool.frame(response).ok()?;
        let mut reader = crate::analysis::diagnosis::facts::FactReader::default();
        Some(ProducedOffsets::read(
            &mut reader,
            self.cat,
            self.release.as_deref(),
            &captured,
        ))
    }

    /// `R`: the records of every frame the list shows that carries records
    /// (Produce requests, Fetch and ShareFetch responses), each decoded from
    /// the spool and dropped; within [`RECORDS_TIME`] (the table says how
    /// far it got).
    fn capture_records(&mut self) {
        let Some(cap) = self.capture.as_ref() else {
            return self.fail(
                "R is for captures (kwire capture FILE --tui); r lists this frame's records",
            );
        };
        let start = std::time::Instant::now();
        let mut lines = Vec::new();
        let mut read = 0;
        let carrying: Vec<usize> = self
            .shown
            .iter()
            .copied()
            .filter(|&i| {
                self.frames[i]
                    .row
                    .as_ref()
                    .is_some_and(|r| carries_records(r.frame.direction, r.frame.api_key))
            })
            .collect();
        for &i in &carrying {
            if start.elapsed() > RECORDS_TIME {
                break;
            }
            let Some(row) = self.frames[i].row.as_ref() else {
                continue;
            };
            let Ok(captured) = cap.spool.frame(row) else {
                continue;
            };
            // A big records field as stubs, each walked, listed and dropped.
            let opts = DecodeOptions {
                topic_ids: cap.topic_ids.clone(),
                budget: cap.budget.clone(),
                defer_records_over: Some(STUB_RECORDS_OVER),
                ..Default::default()
            };
            let (mut frame, _) = decode_captured(
                self.cat,
                self.release.as_deref(),
                &captured,
                cap.guess,
                opts,
            );
            stub_items(self.cat, &mut frame, &cap.budget);
            let number = self.frame_number(i);
            let produced = self.produced_offsets(i);
            let open = |n: &Node| open_stub(self.cat, &frame.bytes, n, &cap.budget);
            let listed = record_lines(
                self.cat,
                self.release.as_deref(),
                &frame,
                &cap.topic_ids,
                produced.as_ref(),
                &open,
            );
            for mut l in listed.lines {
                l.text = format!("{number:>7} {}", l.text);
                l.frame = Some(i);
                lines.push(l);
            }
            read += 1;
        }
        if lines.is_empty() {
            return self.info(format!(
                "no records in the {} frames listed that carry them",
                carrying.len()
            ));
        }
        let of = if read < carrying.len() {
            format!(
                "the first {read} of {} frames carrying records (time ran out)",
                carrying.len()
            )
        } else {
            crate::text::count(read, "frame", "frames")
        };
        self.mode = Mode::Records(RecordsList {
            lines,
            selected: 0,
            top: 0,
            of,
        });
    }

    /// Lines an overlay list pages by: the taller of grid and tree.
    fn overlay_rows(&self) -> usize {
        usize::from(self.geometry.grid.height.max(self.geometry.tree.height)).max(1)
    }

    /// Keys over the records table: move, Enter selects the record, Esc closes.
    fn records_key(&mut self, code: KeyCode) {
        let rows = self.overlay_rows();
        let Mode::Records(list) = &mut self.mode else {
            return;
        };
        if list_move(
            code,
            (&mut list.selected, &mut list.top),
            list.lines.len(),
            rows,
        ) {
            return;
        }
        match code {
            KeyCode::Enter => {
                let (path, frame) = list
                    .lines
                    .get(list.selected)
                    .map(|l| (l.path.clone(), l.frame))
                    .unwrap_or_default();
                self.mode = Mode::Normal;
                self.focus = Focus::Tree;
                if let Some(i) = frame {
                    self.select_frame(i);
                }
                self.select_path(&path);
            }
            KeyCode::Esc | KeyCode::Char('q' | 'r') => self.mode = Mode::Normal,
            _ => {}
        }
    }

    /// Keys of the findings list: move, Enter goes to the selected group's
    /// next frame (the list stays open behind `!`), Esc closes.
    fn findings_key(&mut self, code: KeyCode) {
        let rows = self.overlay_rows();
        let Mode::Findings(list) = &mut self.mode else {
            return;
        };
        if list_move(
            code,
            (&mut list.selected, &mut list.top),
            list.lines.len(),
            rows,
        ) {
            return;
        }
        match code {
            KeyCode::Enter => {
                let Some(n) = list.next_frame() else {
                    return;
                };
                let Mode::Findings(list) = std::mem::replace(&mut self.mode, Mode::Normal) else {
                    return;
                };
                self.last_findings = Some(list);
                self.go_to_capture_frame(n);
            }
            KeyCode::Esc | KeyCode::Char('q' | '!') => self.mode = Mode::Normal,
            _ => {}
        }
    }

    /// Select the frame numbered `n` in the capture, if the list shows it.
    fn go_to_capture_frame(&mut self, n: usize) {
        let at = self
            .frames
            .iter()
            .position(|s| s.row.as_ref().is_some_and(|r| r.frame.index == n));
        match at {
            Some(i) if self.shown.contains(&i) => {
                self.focus = Focus::Frames;
                self.select_frame(i);
                self.info(format!("frame #{n} · ! returns to the findings"));
            }
            Some(_) => self.fail(format!(
                "frame #{n} is hidden by the filter (f, then Enter on an empty line, shows all)"
            )),
            None => self.fail(format!("frame #{n} is not in the list")),
        }
    }

    /// `x`: `hex FILE`, `json FILE` or `pcap FILE`.
    fn export(&mut self, text: &str) {
        let words: Vec<&str> = text.split_whitespace().collect();
        let done = match (words.as_slice(), self.frame()) {
            (["hex", path], Some(fv)) => super::export::hex(path, &fv.grid_bytes()[fv.selection()]),
            // A frame held as stubs is big: its contract goes on one line.
            (["json", path], Some(fv)) => super::export::json(
                path,
                (self.cat, self.release.as_deref()),
                &fv.frame,
                fv.budget.limits(),
                fv.unopened_stubs() > 0,
            ),
            (["pcap", path], _) => match &self.capture {
                Some(cap) => super::export::pcap(
                    path,
                    &cap.spool,
                    self.shown
                        .iter()
                        .filter_map(|&i| self.frames[i].row.as_ref()),
                    self.cat,
                    self.release.as_deref(),
                ),
                None => Err("pcap exports a capture's frames (kwire capture FILE --tui)".into()),
            },
            ([_, _], None) => Err("no frame to export".into()),
            _ => Err("type `hex FILE`, `json FILE` or `pcap FILE`".into()),
        };
        match done {
            Ok(m) => self.info(sanitize(&m)),
            Err(e) => self.fail(sanitize(&e)),
        }
    }

    /// `API VERSION` of a frame, to start the `v` prompt from.
    fn describe_api(&self, f: &Frame) -> String {
        match (f.api_key, f.api_version) {
            (Some(k), Some(v)) => format!("{} {v}", self.cat.api_name(k).unwrap_or(&k.to_string())),
            _ => String::new(),
        }
    }

    fn open_prompt(&mut self, kind: PromptKind, text: String) {
        if kind != PromptKind::Decode || !self.frames.is_empty() {
            self.mode = Mode::Prompt(Prompt { kind, text });
        }
    }

    fn grid_key(&mut self, code: KeyCode) {
        let Some(fv) = self.frame() else { return };
        let (c, last) = (fv.cursor, fv.grid_bytes().len().saturating_sub(1));
        let page = self.grid_height() * ROW;
        let to = match code {
            KeyCode::Left | KeyCode::Char('h') => c.saturating_sub(1),
            KeyCode::Right | KeyCode::Char('l') => c + 1,
            KeyCode::Up | KeyCode::Char('k') => c.checked_sub(ROW).unwrap_or(c),
            KeyCode::Down | KeyCode::Char('j') => c + ROW,
            KeyCode::PageUp => c.saturating_sub(page),
            KeyCode::PageDown => c + page,
            KeyCode::Home => c - c % ROW,
            KeyCode::End => c - c % ROW + ROW - 1,
            KeyCode::Char('g') => 0,
            KeyCode::Char('G') => last,
            KeyCode::Enter | KeyCode::Char(' ') => {
                self.focus = Focus::Tree;
                return;
            }
            _ => return,
        };
        self.move_cursor(to.min(last));
    }

    fn tree_key(&mut self, code: KeyCode) {
        let page = self.tree_height();
        let opens = matches!(
            code,
            KeyCode::Enter | KeyCode::Char(' ') | KeyCode::Right | KeyCode::Char('l')
        );
        if opens && self.open_selected_stub() {
            return self.after_tree_selection();
        }
        let Some(fv) = self.frame_mut() else { return };
        let root = &fv.frame.root;
        let row = fv.tree.selected_row();
        let last = fv.tree.rows().len().saturating_sub(1);
        let path = fv.tree.selected().to_vec();
        let has_children = root.at_path(&path).is_some_and(|n| !n.children.is_empty());
        let open = fv.tree.is_expanded(&path);
        match code {
            KeyCode::Up | KeyCode::Char('k') => fv.tree.select_row(row.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => fv.tree.select_row((row + 1).min(last)),
            KeyCode::PageUp => fv.tree.select_row(row.saturating_sub(page)),
            KeyCode::PageDown => fv.tree.select_row((row + page).min(last)),
            KeyCode::Char('g') | KeyCode::Home => fv.tree.select_row(0),
            KeyCode::Char('G') | KeyCode::End => fv.tree.select_row(last),
            KeyCode::Enter | KeyCode::Char(' ') if has_children => fv.tree.toggle(root, &path),
            KeyCode::Left | KeyCode::Char('h') if open && has_children => {
                fv.tree.set_expanded(root, &path, false)
            }
            KeyCode::Left | KeyCode::Char('h') if !path.is_empty() => {
                fv.tree.select(root, &path[..path.len() - 1])
            }
            KeyCode::Right | KeyCode::Char('l') if has_children && !open => {
                fv.tree.set_expanded(root, &path, true)
            }
            KeyCode::Right | KeyCode::Char('l') if has_children => fv.tree.select_row(row + 1),
            _ => return,
        }
        self.after_tree_selection();
    }

    /// When the tree's selection is a stub of a big records field's batch:
    /// open it (walk its batch) and expand it; whether it was one.
    fn open_selected_stub(&mut self) -> bool {
        let cat = self.cat;
        let Some(fv) = self.frame_mut() else {
            return false;
        };
        let path = fv.tree.selected().to_vec();
        if !fv.is_stub(&path) {
            return false;
        }
        match fv.open_stub(cat, &path) {
            // Its fields and records shown, as a frame's are when it opens.
            Ok(()) => {
                fv.tree.expand_under(&fv.frame.root, &path);
                fv.tree.select(&fv.frame.root, &path);
            }
            Err(e) => self.fail(e),
        }
        true
    }

    /// The frame on the list's first line that is one.
    fn first_listed(&self) -> Option<usize> {
        self.lines.iter().find_map(|l| match *l {
            ListLine::Frame(i) => Some(i),
            _ => None,
        })
    }

    /// The frame on the list's last line that is one.
    fn last_listed(&self) -> Option<usize> {
        self.lines.iter().rev().find_map(|l| match *l {
            ListLine::Frame(i) => Some(i),
            _ => None,
        })
    }

    fn frames_key(&mut self, code: KeyCode) {
        let page = self
            .geometry
            .frames
            .map_or(1, |r| usize::from(r.height).max(1)) as isize;
        let to = match code {
            KeyCode::Up | KeyCode::Char('k') => self.shown_step(-1),
            KeyCode::Down | KeyCode::Char('j') => self.shown_step(1),
            KeyCode::PageUp => self.shown_step(-page).or(self.first_listed()),
            KeyCode::PageDown => self.shown_step(page).or(self.last_listed()),
            KeyCode::Char('g') | KeyCode::Home => self.first_listed(),
            KeyCode::Char('G') | KeyCode::End => self.last_listed(),
            KeyCode::Enter | KeyCode::Char(' ') => {
                self.focus = Focus::Grid;
                return;
            }
            _ => return,
        };
        if let Some(i) = to {
            self.select_frame(i);
        }
    }

    // ---- prompts ------------------------------------------------------------------------

    fn prompt_key(&mut self, key: KeyEvent) {
        let Mode::Prompt(p) = &mut self.mode else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.mode = Mode::Normal,
            KeyCode::Backspace => {
                p.text.pop();
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => p.text.clear(),
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => p.text.push(c),
            KeyCode::Enter => {
                let p = p.clone();
                self.mode = Mode::Normal;
                self.submit(p);
            }
            _ => {}
        }
    }

    fn submit(&mut self, p: Prompt) {
        match p.kind {
            PromptKind::Search => self.start_search(p.text.trim()),
            PromptKind::Jump => match (
                parse_offset(&p.text),
                self.frame().map(|f| f.grid_bytes().len()),
            ) {
                (Some(at), Some(len)) if at < len => {
                    self.focus = Focus::Grid;
                    self.move_cursor(at);
                }
                (Some(at), Some(len)) => {
                    self.fail(format!("offset 0x{at:x} is past the frame's {len} bytes"))
                }
                (None, _) => self.fail(format!(
                    "not an offset: {} (use 0x1a or 26)",
                    sanitize(&p.text)
                )),
                (_, None) => {}
            },
            PromptKind::Decode => self.redecode(&p.text),
            PromptKind::Filter => self.apply_filter(&p.text),
            PromptKind::Export => self.export(&p.text),
        }
    }

    pub(crate) fn start_search(&mut self, query: &str) {
        let Some(fv) = self.frame() else { return };
        if query.is_empty() {
            self.search = None;
            return;
        }
        self.search = Some(fv.search(self.cat, query));
        self.search_step(true);
    }

    fn search_step(&mut self, forward: bool) {
        let Some(cursor) = self.frame().map(|f| f.cursor) else {
            return;
        };
        let Some(s) = self.search.as_mut() else {
            return self.fail("no search: press / first");
        };
        let query = sanitize(&s.query);
        // Past the last hit of this frame (the first, going back), the search
        // goes on in the next frame shown that has one.
        let n = s.hits.len();
        let leaves = match (s.current, forward) {
            _ if n == 0 => true,
            (Some(c), true) => c + 1 >= n,
            (Some(c), false) => c == 0,
            (None, true) => s.hits.iter().all(|h| h.at < cursor),
            (None, false) => s.hits.iter().all(|h| h.at > cursor),
        };
        if leaves && self.shown.len() > 1 {
            return self.search_other_frames(forward);
        }
        let Some(hit) = s.next(cursor, forward).cloned() else {
            return self.fail(format!("no match for {query}"));
        };
        let (i, n) = (s.current.unwrap_or(0) + 1, s.hits.len());
        self.go_to_hit(hit);
        self.info(format!("match {i} of {n} for {query}"));
    }

    fn go_to_hit(&mut self, hit: super::search::Hit) {
        match (hit.path, hit.buffer) {
            (Some(p), _) => self.select_path(&p),
            (None, None) => {
                self.move_cursor(hit.range.start);
                self.reveal(hit.range);
            }
            (None, Some(buffer)) => {
                // Bytes in decompressed data: select the node there, which
                // switches the grid to that buffer, then the bytes.
                let Some(fv) = self.frame() else { return };
                let path = fv.path_in_buffer(&buffer, hit.range.start);
                self.select_path(&path);
                self.move_cursor(hit.range.start);
                self.reveal(hit.range);
            }
        }
    }

    /// The search in the frames after (before) the current one, in the list's
    /// order and around, each decoded to be searched (its tree, notes and
    /// bytes) and, for a capture's, its list line too; within
    /// [`SEARCH_TIME`] a key (`n` goes on from where it stopped).
    fn search_other_frames(&mut self, forward: bool) {
        let Some(query) = self.search.as_ref().map(|s| s.query.clone()) else {
            return;
        };
        let needle = query.to_lowercase();
        let start = std::time::Instant::now();
        let total = self.shown.len();
        let at = self.shown_position();
        let mut lines = crate::render::listing::LineWriter::new(self.cat);
        let mut line = Vec::new();
        for step in 1..total {
            let pos = if forward {
                (at + step) % total
            } else {
                (at + total - step % total) % total
            };
            let i = self.shown[pos];
            if start.elapsed() > SEARCH_TIME {
                // Stop here: the next `n` starts from this frame.
                self.select_frame(i);
                return self.info(format!(
                    "searched {} without a match for {} (n searches on)",
                    crate::text::count(step, "frame", "frames"),
                    sanitize(&query)
                ));
            }
            let row = self.frames[i].row.as_ref();
            let in_line = row
                .zip(row.and_then(|r| self.listed(r)))
                .is_some_and(|(r, f)| {
                    line.clear();
                    lines.push_frame(&mut line, &f, &r.entry, r.latency_us, false);
                    String::from_utf8_lossy(&line)
                        .to_lowercase()
                        .contains(&needle)
                });
            self.ensure_decoded(i);
            let hits = self.frames[i]
                .view
                .as_ref()
                .map_or(0, |fv| fv.search(self.cat, &query).hits.len());
            if hits == 0 && !in_line {
                continue;
            }
            self.select_frame(i);
            let wrapped = if forward { pos <= at } else { pos >= at };
            let around = if wrapped {
                " (search wrapped around the list)"
            } else {
                ""
            };
            if hits == 0 {
                return self.info(format!(
                    "{} is in frame {}'s list line{around}",
                    sanitize(&query),
                    self.frame_number(i)
                ));
            }
            let cursor = if forward { 0 } else { usize::MAX };
            let hit = self
                .search
                .as_mut()
                .and_then(|s| s.next(cursor, forward).cloned());
            if let Some(hit) = hit {
                self.go_to_hit(hit);
            }
            let k = self
                .search
                .as_ref()
                .and_then(|s| s.current)
                .map_or(1, |c| c + 1);
            return self.info(format!(
                "match {k} of {hits} in frame {} for {}{around}",
                self.frame_number(i),
                sanitize(&query)
            ));
        }
        // No other frame has it: this frame's own hits, around.
        let cursor = self.frame().map_or(0, |f| f.cursor);
        match self
            .search
            .as_mut()
            .and_then(|s| s.next(cursor, forward).cloned())
        {
            Some(hit) => {
                self.go_to_hit(hit);
                self.info(format!("only this frame has {}", sanitize(&query)));
            }
            None => self.fail(format!(
                "no match for {} in {}",
                sanitize(&query),
                crate::text::count(total, "frame", "frames")
            )),
        }
    }

    /// A frame's number as the list shows it (a capture's as `--list` does).
    fn frame_number(&self, i: usize) -> String {
        match self.frames.get(i).and_then(|s| s.row.as_ref()) {
            Some(r) => format!("#{}", r.frame.index),
            None => format!("{}", i + 1),
        }
    }

    /// `v`: decode the current frame's bytes again, as a request or as the
    /// response of the API and version typed.
    fn redecode(&mut self, text: &str) {
        let opts = match self.decode_options(text) {
            Ok(o) => o,
            Err(e) => return self.fail(e),
        };
        let Some(fv) = self.frame() else { return };
        let frame = decode_frame(
            self.cat,
            fv.frame.bytes.clone(),
            fv.frame.input_offset,
            &opts,
        );
        let source = fv.source.clone();
        let what = format!(
            "decoded again as {}",
            sanitize(&crate::render::text_tree::label(&frame.root))
        );
        let fv = FrameView::stubbed(self.cat, frame, source, opts.budget.clone());
        self.frames[self.current].view = Some(Box::new(fv));
        self.refresh_search();
        self.scroll_to_selection();
        self.info(what);
    }

    fn decode_options(&self, text: &str) -> Result<DecodeOptions, String> {
        let release = self.release.clone();
        let words: Vec<&str> = text.split_whitespace().collect();
        match words.as_slice() {
            ["request" | "req"] => Ok(stubbing(DecodeOptions {
                direction: Some(Direction::Request),
                release,
                ..Default::default()
            })),
            [api, version] => {
                let key = self
                    .cat
                    .resolve_api(api)
                    .ok_or_else(|| format!("unknown API {}", sanitize(api)))?;
                let v: i16 = version
                    .parse()
                    .map_err(|_| format!("not a version: {}", sanitize(version)))?;
                let valid = self
                    .cat
                    .versions(MessageKind::Response, key, release.as_deref());
                if !valid.contains(&v) {
                    let name = self.cat.api_name(key).unwrap_or("?");
                    return Err(format!(
                        "{name} has no response version {v}; valid: {}",
                        crate::decode::frame::compress_versions(&valid)
                    ));
                }
                Ok(stubbing(DecodeOptions {
                    direction: Some(Direction::Response),
                    api_key: Some(key),
                    api_version: Some(v),
                    release,
                    ..Default::default()
                }))
            }
            _ => Err("type `API VERSION` to decode a response, or `request`".into()),
        }
    }

    // ---- paste and mouse ----------------------------------------------------------------

    /// Bracketed paste: into an open prompt, or hex text that becomes new frames.
    pub fn on_paste(&mut self, text: &str) {
        if let Mode::Prompt(p) = &mut self.mode {
            p.text
                .extend(text.chars().map(|c| if c.is_control() { ' ' } else { c }));
            return;
        }
        self.mode = Mode::Normal;
        let bytes = match parse_hex_text(text) {
            Ok(b) if b.is_empty() => return self.fail("the paste holds no bytes"),
            Ok(b) => Bytes::from(b),
            Err(e) => {
                return self.fail(format!(
                    "the paste is not hex: {}",
                    sanitize(&e.to_string())
                ))
            }
        };
        let opts = stubbing(DecodeOptions {
            direction: Some(Direction::Request),
            release: self.release.clone(),
            ..Default::default()
        });
        self.pastes += 1;
        let first = self.frames.len();
        let source = format!("paste {}", self.pastes);
        // A frame pasted without its size prefix is offered both ways: with
        // the prefix added (selected), and as given.
        let message = match missing_size_prefix(self.cat, &bytes, &opts) {
            Some(added) => {
                self.add_pasted(&added.bytes, &opts, format!("{source}, size prefix added"));
                self.add_pasted(&bytes, &opts, format!("{source}, as given"));
                format!(
                    "{source}: {} bytes that read as a frame without its 4-byte size prefix: \
                     shown with one added, and as given after it",
                    bytes.len()
                )
            }
            None => {
                let count = self.add_pasted(&bytes, &opts, source.clone());
                format!(
                    "{source}: {} bytes, {} decoded as requests (v to change)",
                    bytes.len(),
                    crate::text::count(count, "frame", "frames")
                )
            }
        };
        self.select_frame(first);
        self.info(message);
    }

    /// Decodes pasted bytes into frames at the end of the list; how many.
    fn add_pasted(&mut self, bytes: &Bytes, opts: &DecodeOptions, source: String) -> usize {
        let frames = decode_frames(self.cat, bytes, opts);
        let first = self.frames.len();
        let count = frames.len();
        self.shown.extend(first..first + count);
        self.lines
            .extend((first..first + count).map(ListLine::Frame));
        self.frames.extend(frames.into_iter().map(|f| FrameSlot {
            row: None,
            view: Some(Box::new(FrameView::stubbed(
                self.cat,
                f,
                source.clone(),
                opts.budget.clone(),
            ))),
        }));
        count
    }

    pub fn on_mouse(&mut self, m: MouseEvent) {
        if self.mode != Mode::Normal {
            return;
        }
        let at = Position::new(m.column, m.row);
        let g = self.geometry;
        let over_frames = g.frames.filter(|r| r.contains(at));
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(r) = over_frames {
                    self.focus = Focus::Frames;
                    // A connection's open or close is not a frame to select.
                    if let Some(&ListLine::Frame(i)) =
                        self.lines.get(self.frames_top + usize::from(at.y - r.y))
                    {
                        self.select_frame(i);
                    }
                } else if g.grid.contains(at) {
                    self.click_grid(at);
                } else if g.tree.contains(at) {
                    self.click_tree(at);
                }
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                let down = m.kind == MouseEventKind::ScrollDown;
                if let Some(r) = over_frames {
                    let max = self.lines.len().saturating_sub(usize::from(r.height));
                    self.frames_top = if down {
                        (self.frames_top + 1).min(max)
                    } else {
                        self.frames_top.saturating_sub(1)
                    };
                } else if g.grid.contains(at) {
                    let h = self.grid_height();
                    if let Some(fv) = self.frame_mut() {
                        let max = row_count(fv.grid_bytes().len()).saturating_sub(h);
                        fv.grid_top = if down {
                            (fv.grid_top + WHEEL_LINES).min(max)
                        } else {
                            fv.grid_top.saturating_sub(WHEEL_LINES)
                        };
                    }
                } else if g.tree.contains(at) {
                    let h = self.tree_height();
                    if let Some(fv) = self.frame_mut() {
                        fv.tree.scroll_by(
                            if down {
                                WHEEL_LINES as isize
                            } else {
                                -(WHEEL_LINES as isize)
                            },
                            h,
                        );
                    }
                }
            }
            _ => {}
        }
    }

    fn click_grid(&mut self, at: Position) {
        let Some(fv) = self.frame() else { return };
        let geo = GridGeometry::new(fv.grid_bytes().len());
        let Some(col) = geo.column_at(at.x - self.geometry.grid.x) else {
            return;
        };
        let byte = (fv.grid_top + usize::from(at.y - self.geometry.grid.y)) * ROW + col;
        if byte < fv.grid_bytes().len() {
            self.focus = Focus::Grid;
            self.move_cursor(byte);
        }
    }

    fn click_tree(&mut self, at: Position) {
        let (x, y) = (
            at.x - self.geometry.tree.x,
            usize::from(at.y - self.geometry.tree.y),
        );
        self.focus = Focus::Tree;
        let Some(fv) = self.frame_mut() else { return };
        let i = fv.tree.top + y;
        let Some(row) = fv.tree.rows().get(i).cloned() else {
            return;
        };
        fv.tree.select_row(i);
        let m = marker_x(&row);
        let x = usize::from(x) + fv.tree.left;
        let on_marker = (usize::from(m)..usize::from(m) + 2).contains(&x);
        if row.has_children && on_marker && !self.open_selected_stub() {
            if let Some(fv) = self.frame_mut() {
                fv.tree.toggle(&fv.frame.root, &row.path);
            }
        }
        self.after_tree_selection();
    }
}

/// Columns `<` and `>` scroll the tree sideways by, and at most in all.
const SIDEWAYS: usize = 8;
const MAX_SIDEWAYS: usize = 4096;

/// `0x1a` (hex) or `26` (decimal).
pub(crate) fn parse_offset(text: &str) -> Option<usize> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => usize::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// Grid rows that hold the bytes of `range` (at least one row).
fn grid_rows(range: Range<usize>) -> Range<usize> {
    range.start / ROW..range.end.max(range.start + 1).div_ceil(ROW)
}

/// The first line on screen after scrolling as little as possible to show
/// `lines` (`height` lines a screen, `total` in all); their start wins when
/// they do not all fit.
fn scroll_to(top: usize, lines: Range<usize>, height: usize, total: usize) -> usize {
    // A jump (search, an offset, another frame) centres what it reaches; a
    // step to the line just past an edge scrolls by that line.
    let jumped = lines.start + 1 < top || lines.end > top + height + 1;
    let centred = lines
        .start
        .saturating_sub(height.saturating_sub(lines.len()) / 2);
    let top = if lines.start < top {
        if jumped && lines.len() < height {
            centred
        } else {
            lines.start
        }
    } else if lines.end > top + height {
        if jumped && lines.len() < height {
            centred
        } else if lines.len() <= height {
            lines.end - height
        } else {
            lines.start
        }
    } else {
        top
    };
    top.min(total.saturating_sub(height))
}

/// Move a list's selection on `code` (arrows, j k, pages, g G) among `len`
/// lines with `rows` on screen, scrolling `top` to keep it shown; false for
/// other keys.
fn list_move(
    code: KeyCode,
    (selected, top): (&mut usize, &mut usize),
    len: usize,
    rows: usize,
) -> bool {
    let last = len.saturating_sub(1);
    *selected = match code {
        KeyCode::Up | KeyCode::Char('k') => selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => (*selected + 1).min(last),
        KeyCode::PageUp => selected.saturating_sub(rows),
        KeyCode::PageDown => (*selected + rows).min(last),
        KeyCode::Char('g') | KeyCode::Home => 0,
        KeyCode::Char('G') | KeyCode::End => last,
        _ => return false,
    };
    *top = scroll_to(*top, *selected..*selected + 1, rows, len);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::regions::byte_owners;

    /// Frames of the samples and of the real captures (compressed batches among them).
    fn frames() -> Vec<Frame> {
        let cat = Catalogue::builtin();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let mut out = Vec::new();
        for name in [
            "produce-v9-request.hex",
            "produce-v9-consumer-offsets-request.hex",
            "join-group-v9-request.hex",
        ] {
            let bytes = parse_hex_text(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
            out.extend(decode_frames(
                cat,
                &Bytes::from(bytes),
                &DecodeOptions::default(),
            ));
        }
        let bytes =
            parse_hex_text(&std::fs::read_to_string(dir.join("fetch-v12-response.hex")).unwrap())
                .unwrap();
        let fetch = DecodeOptions {
            direction: Some(Direction::Response),
            api_key: Some(1),
            api_version: Some(12),
            ..Default::default()
        };
        out.extend(decode_frames(cat, &Bytes::from(bytes), &fetch));
        for pcap in ["kcat.pcap", "kafka-python.pcap"] {
            let file = std::fs::File::open(dir.join("captures").join(pcap)).unwrap();
            crate::capture::for_each_frame(cat, file, None, |f| {
                let mut opts = DecodeOptions {
                    direction: Some(f.direction),
                    api_key: f.api_key,
                    api_version: f.api_version,
                    ..Default::default()
                };
                if f.direction == Direction::Request {
                    (opts.api_key, opts.api_version) = (None, None);
                }
                out.push(decode_frame(cat, f.bytes.clone(), 0, &opts));
                true
            })
            .unwrap();
        }
        out
    }

    /// The path of the first node `want` says is one.
    fn path_to(n: &Node, want: &impl Fn(&Node) -> bool) -> Option<Vec<usize>> {
        if want(n) {
            return Some(Vec::new());
        }
        n.children.iter().enumerate().find_map(|(i, c)| {
            path_to(c, want).map(|mut p| {
                p.insert(0, i);
                p
            })
        })
    }

    #[test]
    fn a_decompressed_nodes_details_are_in_the_bytes_it_was_decompressed_from() {
        let frame = frames()
            .into_iter()
            .find(|f| path_to(&f.root, &|n| n.role == Role::Decompressed).is_some())
            .expect("a frame with decompressed records");
        let at = path_to(&frame.root, &|n| n.role == Role::Decompressed).unwrap();
        let mut fv = FrameView::new(frame.clone(), "test");
        fv.tree.select(&fv.frame.root, &at);
        fv.sync_buffer();
        let node = frame.root.at_path(&at).unwrap();
        let Value::Bytes(Some(data)) = &node.value else {
            panic!("a decompressed node holds its data")
        };
        // The grid shows the data; the node's own range is in the frame.
        assert_eq!(fv.grid_bytes(), &data[..]);
        assert_eq!(fv.details_bytes(), (&frame.bytes[..], false));
        // A record inside: its offsets index the data.
        let mut inside = at.clone();
        inside.push(0);
        fv.tree.select(&fv.frame.root, &inside);
        fv.sync_buffer();
        assert_eq!(fv.details_bytes(), (&data[..], true));
    }

    #[test]
    fn byte_regions_are_the_regions_of_the_byte_owners() {
        let frames = frames();
        assert!(frames.iter().any(|f| {
            let mut d = false;
            f.root
                .walk(&mut |n, _| d |= n.role == crate::decode::Role::Decompressed);
            d
        }));
        for f in frames {
            let mut nodes = Vec::new();
            f.root.walk(&mut |n, _| nodes.push(n.region));
            let owners: Vec<Option<Region>> = byte_owners(&f.root, f.bytes.len())
                .into_iter()
                .map(|o| o.map(|i| nodes[i]))
                .collect();
            let fv = FrameView::new(f.clone(), "test");
            assert_eq!(fv.regions, owners);
            let legend: Vec<Region> = Region::ALL
                .into_iter()
                .filter(|r| owners.contains(&Some(*r)))
                .collect();
            assert_eq!(fv.legend, legend);
        }
    }
}

/// The explorer's filter's field tests, and what each row passed (a row is
/// decoded from the spool once per filter).
#[derive(Default)]
struct RowTests {
    tester: Option<FieldTester>,
    passed: std::collections::HashMap<usize, crate::analysis::expr::fields::Passed>,
}

#[cfg(test)]
mod row_size {
    /// A capture of 1.75 million frames keeps its rows in 350 MB: a row
    /// holds no bytes and no addresses (`analysis::index::RowFrame`).
    #[test]
    fn a_capture_s_row_is_at_most_200_bytes() {
        let size = std::mem::size_of::<super::FrameSlot>();
        assert!(size <= 200, "a row is {size} bytes");
        // What it is today: the frame's facts 80, its listing entry 56, where
        // it is in the spool, its latency and pair 40, its decoded view 8.
        assert_eq!(size, 184);
    }
}
