//! `kwire capture -i IFACE`: packets from a network interface
//! (`kwire::live::interface`) written as pcapng into the in-process pipe that
//! the capture pipeline reads ([`super::capture_cmd::run_on_stream`]), so
//! every `capture` format and selection works live, each frame printed as it
//! completes; `--write-pcap` keeps the same packets. Ctrl-C (or SIGTERM)
//! stops the capture: what the kernel still holds is taken, the sinks are
//! flushed and the pipeline finishes with what completed.

use super::capture_cmd::CaptureArgs;
use super::exit;
use kwire::live::interface::{self, LiveCapture};
use kwire::live::recorder;
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

pub fn run(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs, iface: &str) -> i32 {
    // A wrong selection is said before anything is opened.
    if let Err(status) = args.filter.resolve(cat) {
        return status;
    }
    let mut cap = match LiveCapture::open(iface, args.port) {
        Ok(c) => c,
        Err(e) => {
            // Every reason (no such interface, no permission, not Linux) is the input that could not be used.
            kwire::stderr_line!("kwire: {}", sanitize(&e.to_string()));
            return exit::FAILURE;
        }
    };
    let link_type = cap.framing().link_type();
    let (mut sinks, pipe_out) = match recorder::sinks(args.write_pcap.as_deref(), link_type) {
        Ok(s) => s,
        Err(e) => {
            kwire::stderr_line!("kwire: {}", sanitize(&e));
            return exit::FAILURE;
        }
    };
    let mut signals = match signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ]) {
        Ok(s) => s,
        Err(e) => {
            kwire::stderr_line!("kwire: cannot wait for Ctrl-C: {e}");
            return exit::FAILURE;
        }
    };
    let signals_handle = signals.handle();
    let port = args
        .port
        .map(|p| format!(", TCP port {p}"))
        .unwrap_or_else(|| ", TCP".into());
    // The socket is bound and Ctrl-C is handled: from here on nothing is missed.
    kwire::stderr_line!(
        "kwire: capturing on {} ({}{port}); Ctrl-C stops",
        sanitize(iface),
        cap.framing().describe()
    );
    let printer_args = CaptureArgs {
        file: Some("-".into()),
        interface: None,
        write_pcap: None,
        provenance: true,
        streaming: true,
        ..args.clone()
    };
    let stop = AtomicBool::new(false);
    let (captured, printed) = std::thread::scope(|s| {
        let capturing = s.spawn(|| {
            let r = interface::capture(&mut cap, &mut sinks, &stop);
            // The pipeline sees the end of its input once its writer is gone.
            drop(std::mem::take(&mut sinks));
            // Ended by itself (an error, the pipeline gone): stop waiting for Ctrl-C.
            signals_handle.close();
            r
        });
        let (interrupted, printing) = if args.tui {
            // The explorer: the packets indexed as they come; q stops the capture.
            let explore = kwire::tui::capture::Explore {
                total: None,
                guess: args.guess,
                budget: args.budget.budget(),
                filter: Default::default(),
                topic_ids: Default::default(),
                opts: kwire::capture::CaptureOptions {
                    port: args.port,
                    ..Default::default()
                },
            };
            let name = format!("the capture on {iface}");
            let status = super::capture_cmd::explore_indexed(
                cat,
                release,
                (Box::new(pipe_out), &name),
                explore,
                || {
                    signals_handle.close();
                    stop.store(true, Ordering::SeqCst);
                },
            );
            (false, (status, s.spawn(|| exit::OK)))
        } else {
            let printing = s.spawn(|| {
                super::capture_cmd::run_on_stream(cat, release, &printer_args, Box::new(pipe_out))
            });
            (signals.forever().next().is_some(), (exit::OK, printing))
        };
        let (shown, printing) = printing;
        // First stop, then say so: nothing here may keep the threads from ending
        // (a closed stderr makes `eprintln!` panic, and the scope would wait).
        stop.store(true, Ordering::SeqCst);
        if interrupted {
            let _ = writeln!(
                std::io::stderr(),
                "kwire: stopping the capture on {}",
                sanitize(iface)
            );
        }
        let captured = capturing.join();
        let printed = printing.join().map(|p| if args.tui { shown } else { p });
        (captured, printed)
    });
    let status = printed.unwrap_or(exit::FAILURE);
    match captured {
        Ok(Ok(counts)) => {
            report(iface, &counts);
            status
        }
        // The pipeline stopped reading (its output was closed): its status says why.
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => status,
        Ok(Err(e)) => {
            kwire::stderr_line!(
                "kwire: capturing on {}: {}",
                sanitize(iface),
                sanitize(&e.to_string())
            );
            exit::FAILURE
        }
        Err(_) => exit::FAILURE,
    }
}

/// What was captured, on stderr; packets the kernel dropped are never passed over.
fn report(iface: &str, c: &interface::Counts) {
    let mut line = format!(
        "kwire: {} packets captured on {}",
        c.packets,
        sanitize(iface)
    );
    if c.cut > 0 {
        line.push_str(&format!(
            ", {} longer than {} bytes kept cut",
            c.cut,
            interface::MAX_PACKET
        ));
    }
    line.push_str(&format!(", {} dropped by the kernel", c.dropped));
    if c.dropped > 0 {
        line.push_str(" (the capture fell behind: their bytes are gaps)");
    }
    kwire::stderr_line!("{line}");
}
