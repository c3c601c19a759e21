use super::*;
use crate::error::GroupLocation;

#[test]
fn errors_name_sample_row_and_column() {
    // n = 2, K = 3, d = 2; NaN at sample 1, row 2, column 1.
    let mut x = vec![0.5; 12];
    x[(3 + 2) * 2 + 1] = f64::NAN;
    let e = GroupView::new(&x, 2, 3, 2, GroupLabels::Choice(&[0, 1]), None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::GroupData {
                input: "x",
                at: GroupLocation {
                    sample: 1,
                    row: Some(2),
                    col: Some(1)
                },
                kind: DataErrorKind::NaN
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("sample 1, row 2, column 1"), "{e}");
    let x = vec![0.5; 12];
    let e = GroupView::new(&x, 2, 3, 2, GroupLabels::Choice(&[0, 3]), None).unwrap_err();
    assert!(
        e.to_string().contains("sample 1") && e.to_string().contains("label 3"),
        "{e}"
    );
    let e = GroupView::new(&x, 2, 3, 2, GroupLabels::Ranking(&[0, 1, 2, 2, 0, 2]), None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::GroupData {
                input: "y",
                at: GroupLocation {
                    sample: 1,
                    row: None,
                    col: Some(2)
                },
                kind: DataErrorKind::DuplicateInRanking { label: 2 }
            }
        ),
        "{e}"
    );
    assert!(matches!(
        GroupView::new(&x, 2, 3, 2, GroupLabels::Ranking(&[0, 1, 2]), None),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        GroupView::new(&x, 3, 3, 2, GroupLabels::Choice(&[0, 1, 2]), None),
        Err(Error::Shape(_))
    ));
    assert!(matches!(
        GroupView::new(&x[..4], 2, 1, 2, GroupLabels::Choice(&[0, 0]), None),
        Err(Error::Shape(_))
    ));
    let e = GroupView::new(&x, 2, 3, 2, GroupLabels::Choice(&[0, 1]), Some(&[1.0, -2.0])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::GroupData {
                input: "weights",
                kind: DataErrorKind::NegativeWeight,
                ..
            }
        ),
        "{e}"
    );
    // Item-indexed.
    let items = [1.0, 2.0, 3.0, 4.0];
    let e = GroupView::from_items(&items, 2, 2, &[0, 1, 1, 2], 2, 2, GroupLabels::Choice(&[0, 1]), None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::GroupData {
                input: "index",
                at: GroupLocation {
                    sample: 1,
                    row: None,
                    col: Some(1)
                },
                kind: DataErrorKind::IndexOutOfRange { index: 2, bound: 2 }
            }
        ),
        "{e}"
    );
    let bad = [1.0, f64::INFINITY, 3.0, 4.0];
    let e = GroupView::from_items(&bad, 2, 2, &[0, 1, 1, 0], 2, 2, GroupLabels::Choice(&[0, 1]), None).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Data {
                input: "items",
                at: Location { row: 0, col: Some(1) },
                kind: DataErrorKind::Infinite
            }
        ),
        "{e}"
    );
}

#[test]
fn rows_of_both_layouts_and_pairwise_reduction() {
    let items = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let index = [2u32, 0, 1, 2];
    let v = GroupView::from_items(&items, 3, 2, &index, 2, 2, GroupLabels::Ranking(&[1, 0, 0, 1]), None).unwrap();
    assert_eq!(v.row(0, 0), &[5.0, 6.0]);
    assert_eq!(v.row(1, 0), &[3.0, 4.0]);
    assert_eq!(v.chosen(0), 1);
    assert!(v.is_ranking());
    let p = v.to_pairwise().unwrap();
    assert_eq!(p.x, vec![-4.0, -4.0, 2.0, 2.0]);
    assert_eq!(p.y, vec![1, 0]);
    let dense = [5.0, 6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let w = GroupView::new(&dense, 2, 2, 2, GroupLabels::Choice(&[1, 0]), None).unwrap();
    for i in 0..2 {
        for r in 0..2 {
            assert_eq!(v.row(i, r), w.row(i, r));
        }
    }
    assert!(v.max_centered_row_norm(false) > 0.0);
}
