//! `oxsort man DIR` and `oxsort completions SHELL`: man pages and shell completions generated
//! from the argument definitions (clap), for the install script.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::CommandFactory;

/// Arguments of `oxsort man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Directory the pages are written to (`oxsort.1`, `oxsort-sort.1`, ...).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Arguments of `oxsort completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes `oxsort.1`, one `oxsort-SUB.1` per subcommand and `oxsort-gnu.1` (the `sort`
/// link's command line).
pub fn man(args: ManArgs) -> Result<i32> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let cmd = crate::Cli::command();
    write_page(&args.dir, "oxsort", &cmd)?;
    for sub in cmd.get_subcommands() {
        let name = format!("oxsort-{}", sub.get_name());
        // clap takes static names; a few bytes per page, once per process.
        let static_name: &'static str = Box::leak(name.clone().into_boxed_str());
        let sub = sub.clone().name(static_name);
        write_page(&args.dir, &name, &sub)?;
    }
    let gnu = gnu_page();
    let path = args.dir.join("oxsort-gnu.1");
    std::fs::write(&path, gnu).with_context(|| format!("writing {}", path.display()))?;
    Ok(0)
}

fn write_page(dir: &Path, name: &str, cmd: &clap::Command) -> Result<()> {
    let path = dir.join(format!("{name}.1"));
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    std::fs::write(&path, buf).with_context(|| format!("writing {}", path.display()))
}

/// The `oxsort gnu` / `sort` page: GNU sort's usage text in a roff page.
fn gnu_page() -> String {
    let body: String = crate::gnu::help_text()
        .lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace("\\\\&", "\\&");
    format!(
        ".TH OXSORT-GNU 1 \"\" \"oxsort {}\"\n.SH NAME\noxsort\\-gnu, sort \\- GNU sort's command \
         line on oxsort's engine\n.SH SYNOPSIS\n\\fBoxsort gnu\\fR [OPTION]... [FILE]...\n.br\n\
         \\fBsort\\fR [OPTION]... [FILE]...   (a link named sort to oxsort)\n.SH DESCRIPTION\n.nf\n\
         {body}.fi\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Prints the completion script of `shell` for `oxsort`.
pub fn completions(args: CompletionsArgs) -> Result<i32> {
    let mut cmd = crate::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "oxsort", &mut std::io::stdout());
    Ok(0)
}
