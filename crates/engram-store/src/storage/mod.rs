pub mod candidates;
