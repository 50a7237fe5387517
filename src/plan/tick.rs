//! (tick simulator under construction)
