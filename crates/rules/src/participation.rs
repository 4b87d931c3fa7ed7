//! Rule E-1.8: which runs take part in their examination.

use mccbuild_core::Response;

/// Rule E-1.8: "If a tool participates in an examination in a category, its answers must be
/// returned using a dedicated keyword [...]. If the tool does not participate, it must state it
/// explicitly. If the tool cannot compute a result, it must state it explicitly [...]. When the
/// analysis script does not find any appropriately formatted answer, it will assume that the
/// tool could not compute anything." A run takes part unless it said DO_NOT_COMPETE: one that
/// computed nothing takes part and scores 0.
pub fn takes_part(response: Response) -> bool {
    response != Response::DoNotCompete
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_do_not_compete_stays_out() {
        assert!(takes_part(Response::Answered));
        assert!(takes_part(Response::CannotCompute));
        assert!(!takes_part(Response::DoNotCompete));
    }
}
