//! The versioned name of eval-runtime's hidden module that generated code
//! calls (as thiserror's `__private{PATCH}`): `__private_0_1_0` for this
//! crate's version 0.1.0. eval-runtime defines the module under the name its
//! own version gives (its build.rs, the same rule) and requires this crate
//! at exactly its version (`eval-macros = "=0.1.0"`), so an expansion from a
//! different eval-macros fails to compile naming the module, instead of
//! building a `Decl` whose fields have moved on.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, TokenStreamExt};

/// `__private_` followed by the version with every character that cannot be
/// in an identifier made `_`: `0.1.0` → `__private_0_1_0`,
/// `0.2.0-rc.1` → `__private_0_2_0_rc_1`.
pub(crate) fn module_name(version: &str) -> String {
    let tail: String = version
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("__private_{tail}")
}

/// Interpolated as `#private` in `quote!`: the versioned module's name.
#[allow(non_camel_case_types)]
pub(crate) struct private;

impl ToTokens for private {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.append(Ident::new(
            &module_name(env!("CARGO_PKG_VERSION")),
            Span::call_site(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_carries_the_whole_version() {
        assert_eq!(module_name("0.1.0"), "__private_0_1_0");
        assert_eq!(module_name("0.2.0-rc.1"), "__private_0_2_0_rc_1");
        let here = private.to_token_stream().to_string();
        assert_eq!(here, module_name(env!("CARGO_PKG_VERSION")));
    }
}
