//! Whose move an error is: the user's (a flag, a file, a name) or the machine's (no driver, a GPU
//! failure, a full disk). Every layer's error enum says which through [`Blame`]; the command line
//! turns that into its exit code in one place (`cli::CliError`: 2 for input, 1 for the machine).

/// Who has to act on an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The user's input: a flag value, a file, a name that does not exist.
    Input,
    /// The machine or its environment: no driver, a GPU or library failure, a full disk.
    Machine,
}

/// An error that knows whose fault it is.
pub trait Blame {
    /// Whose move this error is.
    fn fault(&self) -> Fault;

    /// True when the user's input is at fault rather than the machine.
    fn is_bad_input(&self) -> bool {
        self.fault() == Fault::Input
    }
}
