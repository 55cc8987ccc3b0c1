//! The container sandbox: each session and each check in a fresh container of the
//! task's image, through an OCI engine's command line (`engine.rs`: docker or podman,
//! whichever answers), the image made ready once (`image.rs`: inspected, or built from
//! its Dockerfile and tagged by its context's hash) and one command's container
//! (`run.rs`: its arguments, the engine's word on whether it ran, its removal), from
//! what every container of a task shares (`task.rs`); a confined command's container
//! from its layout (`confined.rs`: an agent's session, its wrapper's sandbox query).

mod confined;
mod engine;
mod image;
mod run;
mod task;

pub use confined::ConfinedContainer;
pub use engine::{Called, Engine, EngineName};
pub use image::{ImageSource, ReadyImage, TAG_REPOSITORY, ready, tag_of};
pub use run::{Container, ContainerLimits, ContainerRun, LABEL, Mount, Ran};
pub use task::{TaskContainer, container_user};
