//! `capstan-storeutl`: checks the embedded store of a stopped `capstan-apiserver`, and salvages
//! it when its write-ahead log is damaged (the server refuses to start on such damage).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Checks and salvages the embedded store of a stopped capstan-apiserver.
#[derive(Parser)]
#[command(name = "capstan-storeutl", version)]
struct Options {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Reports the store's state and any damage. Exit status 0: healthy; 2: damaged (the
    /// server refuses to start until it is salvaged); 1: the files could not be read. Opening
    /// the database rolls it back to its last durable commit, as a start does; nothing else is
    /// written.
    Check {
        /// The server's --data-dir.
        #[arg(long, default_value = "/var/lib/capstan")]
        data_dir: PathBuf,
    },
    /// Rebuilds a damaged store from every intact record of its log, after copying both files
    /// beside themselves (`*.damaged-<time>`). Changes held only by the damaged records are
    /// lost; the revision moves past every revision ever written and history is compacted,
    /// so clients relist. Does nothing to a healthy store.
    Salvage {
        /// The server's --data-dir.
        #[arg(long, default_value = "/var/lib/capstan")]
        data_dir: PathBuf,
    },
}

fn main() -> ExitCode {
    let options = Options::parse();
    let result = match &options.command {
        Command::Check { data_dir } => {
            capstan_storage::check(&data_dir.join("capstan.redb")).map(|report| {
                print!("{report}");
                if report.healthy() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(2)
                }
            })
        }
        Command::Salvage { data_dir } => capstan_storage::salvage(&data_dir.join("capstan.redb"))
            .map(|report| {
                println!("{report}");
                ExitCode::SUCCESS
            }),
    };
    result.unwrap_or_else(|err| {
        eprintln!("capstan-storeutl: {err}");
        ExitCode::FAILURE
    })
}
