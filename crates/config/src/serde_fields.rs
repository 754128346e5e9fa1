//! Test support: the field names a serde-derived struct reads, so tests can hold the
//! schema's structs to the documented key lists.

use serde::{Deserialize, Deserializer};

/// The field names a derived struct declares (serde passes them to `deserialize_struct`).
pub(crate) fn fields_of<T: for<'de> Deserialize<'de>>() -> Vec<&'static str> {
    struct Fields(Vec<&'static str>);
    struct Probe<'a>(&'a mut Fields);
    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("only the field names are wanted"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.0.extend(fields);
            Err(serde::de::Error::custom("only the field names are wanted"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut fields = Fields(Vec::new());
    let _ = T::deserialize(Probe(&mut fields));
    let mut names = fields.0;
    names.sort_unstable();
    names
}
