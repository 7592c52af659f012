-- A pet's photos (issue 35): pets.photos holds them in order, as
-- petstore.MarshalPhotos writes them ("" for none), so that a page of pets is still
-- one query; photos files each photo id under its pet, for the sweep of the media
-- store (which photo ids does a pet still have?) and for deleting a pet's photos.

-- +goose Up
ALTER TABLE pets ADD COLUMN photos TEXT NOT NULL DEFAULT '';
CREATE TABLE photos (
    id     TEXT    NOT NULL PRIMARY KEY,
    pet_id INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX photos_pet ON photos (pet_id);

-- +goose Down
DROP TABLE photos;
ALTER TABLE pets DROP COLUMN photos;
