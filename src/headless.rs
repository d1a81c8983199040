//! The non-interactive front end (`toolgate -p PROMPT`).
